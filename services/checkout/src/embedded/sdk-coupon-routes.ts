import { ApiError, ApplyPromotionCodeBody, type CallerIdentity, CheckoutIdParams, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { validate } from '@billing/service';
import type { Express, Request } from 'express';
import { dependenciesOf } from '../dependencies';
import { chooseLocale, messagesFor, promotionRefusal } from '../hosted-page/messages';
import { applyPromotion, removePromotion } from '../sessions/promotion-code';
import { findSession } from '../sessions/queries';
import type { Session } from '../sessions/session';
import { cardFormScriptUrl } from './card-form-routes';
import { toCheckoutAnswer } from './resource';
import { toSdkDiscount } from './sdk-answers';

/** Where the gateway sends the SDK's key-less coupon calls (`/v1/checkouts/{id}/coupon` without a key). */
const PAGE_COUPON_PATH = '/embed/checkouts/:id/coupon';

/**
 * The recur-tw SDK's coupon box (0.11) sends neither key nor client secret. Such a call is taken
 * only for an embedded checkout created from a browser page with a Publishable Key, and only from
 * that page's origin (`page_origin`); any other is 404, as if the checkout did not exist. The
 * code is reserved and refused as with a Publishable Key (refusals masked), in the browser's language.
 */
export function mountSdkCouponRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const script = () => cardFormScriptUrl(dependenciesOf(context).checkoutUrl);
  const answer = (session: Session) => ({
    ...toCheckoutAnswer(session, now(), script()),
    discount: toSdkDiscount(session),
  });

  const checkoutOfPage = async (req: Request): Promise<Session> => {
    const { id } = req.params as CheckoutIdParams;
    const session = await findSession(store.database, store.tables.schema, id);
    const origin = req.get('origin');
    if (!session || session.ui_mode !== 'embedded' || !session.page_origin || session.page_origin !== origin) {
      throw notFound(`No such checkout: ${id}`);
    }
    return session;
  };

  /** A refusal about the code, worded for the buyer, as the hosted page words it. */
  const inBuyersLanguage = (req: Request, err: unknown): unknown => {
    if (!(err instanceof ApiError)) return err;
    const text = promotionRefusal(err, messagesFor(chooseLocale(null, req.get('accept-language'))));
    return text ? new ApiError(err.status, err.code, text, err.details) : err;
  };

  app.post(PAGE_COUPON_PATH, validate({ params: CheckoutIdParams, body: ApplyPromotionCodeBody }), async (req, res) => {
    const checkout = await checkoutOfPage(req);
    const { code } = res.locals.input.body as ApplyPromotionCodeBody;
    const session = await applyPromotion(context, pageCaller(checkout), checkout, code).catch((err: unknown) => {
      throw inBuyersLanguage(req, err);
    });
    res.json(answer(session));
  });

  app.delete(PAGE_COUPON_PATH, validate({ params: CheckoutIdParams }), async (req, res) => {
    const checkout = await checkoutOfPage(req);
    const session = await removePromotion(context, checkout).catch((err: unknown) => {
      throw inBuyersLanguage(req, err);
    });
    res.json(answer(session));
  });
}

/** The page acts as the Publishable Key that created the checkout would: promotions masks its refusals. */
const pageCaller = (session: Session): CallerIdentity => ({
  organization: session.organization,
  environment: session.environment,
  keyKind: 'publishable',
  keyId: 'embedded-checkout-page',
});
