import { createHash, timingSafeEqual } from 'node:crypto';
import {
  ApplyPromotionCodeBody,
  CheckoutIdParams,
  ClientSecretQuery,
  CreateCheckoutBody,
  PayCheckoutBody,
  badRequest,
  notFound,
  type CallerIdentity,
  ApiError,
  type Einvoice,
  einvoiceViolations,
  validationError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, languageOf, requireCaller, validate } from '@billing/service';
import type { Express, RequestHandler } from 'express';
import { dependenciesOf } from '../dependencies';
import { CardForms } from '../payments/card-form';
import { runSessionCommands } from '../sessions/command';
import { createSession, parseSessionRequest } from '../sessions/create';
import { paySession } from '../sessions/pay';
import { payWithPayuni, payuniCardFieldsFor, payuniMerchantFor, rememberedPayuniFields } from '../sessions/pay-payuni';
import { processorSettingsFor } from '../payments/settings/aggregate';
import { applyPromotion, removePromotion } from '../sessions/promotion-code';
import { findCallerSession } from '../sessions/queries';
import type { Session } from '../sessions/session';
import { cardFormScriptUrl } from './card-form-routes';
import { toCheckoutAnswer, toPaidAnswer } from './resource';
import { answerSdkRefusals, toSdkDiscount } from './sdk-answers';

/** The SDK's camelCase names in pay and coupon bodies, and the snake_case ones they stand for. */
const ALIASES: Record<string, string> = { clientSecret: 'client_secret', creditToken: 'credit_token' };

const snakeCaseBody: RequestHandler = (req, _res, next) => {
  const body = req.body as Record<string, unknown> | undefined;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const [camel, snake] of Object.entries(ALIASES)) {
      if (camel in body && !(snake in body)) body[snake] = body[camel];
      delete body[camel];
    }
  }
  next();
};

const sameSecret = (given: string, expected: string) => {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
};

/** Whether the pay body's credit_token (the SDK posts the answer's back) is the checkout's client_secret. */
const sameCreditToken = (body: PayCheckoutBody, checkout: Session) =>
  body.credit_token !== undefined && sameSecret(body.credit_token, checkout.intent.client_secret);

/**
 * Embedded checkouts (docs/embedded-checkout.md): checkout sessions with `ui_mode` embedded, so
 * that a paid one is the same order, subscription, redemption and `checkout.completed` as a
 * hosted one. A Publishable Key reads, pays and changes the code of a checkout with its
 * `client_secret`; another checkout's secret is 404, as if the checkout did not exist.
 */
export function mountEmbeddedCheckoutRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const { schema } = store.tables;
  const cardForms = new CardForms(store);
  const script = () => cardFormScriptUrl(dependenciesOf(context).checkoutUrl);

  /** The caller's embedded checkout, when `secret` (if given) is its own; a Publishable Key must give one. */
  const checkoutFor = async (caller: CallerIdentity, id: string, secret: string | undefined, secretRequired = true) => {
    const session = await findCallerSession(store.database, schema, caller, id);
    if (!session || session.ui_mode !== 'embedded') throw notFound(`No such checkout: ${id}`);
    if (secret !== undefined && !sameSecret(secret, session.intent.client_secret)) {
      throw notFound(`No such checkout: ${id}`);
    }
    if (secret === undefined && secretRequired && caller.keyKind === 'publishable') {
      throw badRequest('client_secret is required with a Publishable Key');
    }
    return session;
  };

  app.use('/v1/checkouts', requireCaller);
  /** Coupon answers also carry the applied code in the words of the SDK's coupon box. */
  const couponAnswer = (session: Session) => ({
    ...toCheckoutAnswer(session, now(), script()),
    discount: toSdkDiscount(session),
  });

  /**
   * The checkout's answer; for an organization that pays through PAYUNi, with a fresh SDK token
   * of PAYUNi's card fields for the page at the request's origin, and PAYUNi's script.
   */
  const answerOf = async (session: Session, origin: string | undefined) => {
    const answer = toCheckoutAnswer(session, now(), script());
    if (session.status !== 'OPEN' || !session.requires_payment_method) return answer;
    const pageOrigin = origin ?? new URL(dependenciesOf(context).checkoutUrl).origin;
    const payuni = await payuniCardFieldsFor(context, session, pageOrigin).catch((err: unknown) => {
      context.logger.warn({ err, session: session.id }, 'PAYUNi did not open its card fields');
      throw new ApiError(
        502,
        'processor_unavailable',
        'PAYUNi did not open its card fields; nothing was charged, try again',
      );
    });
    return payuni ? { ...answer, sdk_token: payuni.sdkToken, card_form_script: payuni.scriptUrl } : answer;
  };

  app.post('/v1/checkouts', async (req, res) => {
    const caller = callerOf(req);
    const request = parseSessionRequest(req.body, caller, CreateCheckoutBody);
    const session = await createSession(context, caller, {
      ...request,
      ui_mode: 'embedded',
      page_origin: caller.keyKind === 'publishable' ? pageOrigin(req.get('origin')) : undefined,
    });
    res.status(201).json(await answerOf(session, req.get('origin')));
  });

  const read: RequestHandler = async (req, res) => {
    const { id } = res.locals.input.params as CheckoutIdParams;
    const { client_secret } = res.locals.input.query as ClientSecretQuery;
    const session = await checkoutFor(callerOf(req), id, client_secret);
    const answer = toCheckoutAnswer(session, now(), script());
    const payuni = await rememberedPayuniFields(context, session);
    res.json(payuni ? { ...answer, sdk_token: payuni.sdkToken, card_form_script: payuni.scriptUrl } : answer);
  };
  const readParts = validate({ params: CheckoutIdParams, query: ClientSecretQuery });
  app.get('/v1/checkouts/:id', readParts, read);
  app.get('/v1/checkouts/:id/status', readParts, read);

  /** The buyer's e-invoice choice, checked (422 at its field) and recorded on the session before any charge. */
  const chooseEmbeddedEinvoice = async (checkout: Session, einvoice: Einvoice) => {
    const violations = einvoiceViolations(einvoice);
    if (violations.length > 0) throw validationError(violations);
    const at = now();
    await runSessionCommands(context, checkout.id, null, [{ type: 'ChooseEinvoice', data: { einvoice, now: at } }], {
      organization: checkout.organization,
      environment: checkout.environment,
      occurredAt: at,
    });
  };

  app.post(
    '/v1/checkouts/:id/pay',
    snakeCaseBody,
    validate({ params: CheckoutIdParams, query: ClientSecretQuery, body: PayCheckoutBody.default({}) }),
    async (req, res) => {
      const caller = callerOf(req);
      const { id } = res.locals.input.params as CheckoutIdParams;
      const body = res.locals.input.body as PayCheckoutBody;
      const secret = body.client_secret ?? (res.locals.input.query as ClientSecretQuery).client_secret;
      const checkout = await checkoutFor(caller, id, secret, false);
      const buyerInput = { email: body.email, name: body.name };
      // The buyer's browser language, when a browser pays (a server names none): their emails' language.
      const locale = checkout.locale ?? languageOf(req.get('accept-language')) ?? undefined;
      if (body.einvoice) await chooseEmbeddedEinvoice(checkout, body.einvoice);
      // Read once for this payment: where it goes, and whether it may.
      const processor = await processorSettingsFor(context.store, checkout);
      const payuni = await payuniMerchantFor(context, checkout, processor);
      if (payuni) {
        if (secret === undefined && !sameCreditToken(body, checkout) && caller.keyKind === 'publishable') {
          throw badRequest('client_secret is required with a Publishable Key');
        }
        const paid = await payWithPayuni(context, id, { ...buyerInput, locale }, 'embedded', payuni);
        if (paid.status === 'complete') {
          res.json(toPaidAnswer(paid.session, now(), script(), paid.redirectUrl));
          return;
        }
        const waiting = { subscription: null, charge: null, payment_intent: null };
        res.json({
          ...toCheckoutAnswer(checkout, now(), script()),
          ...waiting,
          success: false,
          requires3D: true,
          redirect_url: paid.url,
        });
        return;
      }
      const card = checkout.card_form_token ? await cardForms.find(checkout.card_form_token) : null;
      // The SDK posts the answer's credit_token (the client_secret) back, or its card form's result.
      const creditTokenIsSecret = sameCreditToken(body, checkout);
      // Without its secret, a page proves the checkout is its own by the card entered in its card form.
      if (secret === undefined && !creditTokenIsSecret && caller.keyKind === 'publishable' && !card) {
        throw badRequest('client_secret is required with a Publishable Key');
      }
      const outcome = await paySession(context, id, buyerInput, { uiMode: 'embedded', card, locale, processor });
      if (outcome.status === 'requires_action') {
        throw ApiError.of(
          'payment_required',
          'This card asks for a 3-D Secure challenge, which embedded checkouts do not offer yet: use another card',
          [{ path: 'card', code: 'authentication_required', message: 'The card asks for a challenge step' }],
        );
      }
      res.json(toPaidAnswer(outcome.session, now(), script(), outcome.redirectUrl));
    },
  );

  app.post(
    '/v1/checkouts/:id/coupon',
    snakeCaseBody,
    validate({ params: CheckoutIdParams, query: ClientSecretQuery, body: ApplyPromotionCodeBody }),
    async (req, res) => {
      const caller = callerOf(req);
      const { id } = res.locals.input.params as CheckoutIdParams;
      const body = res.locals.input.body as ApplyPromotionCodeBody;
      const secret = body.client_secret ?? (res.locals.input.query as ClientSecretQuery).client_secret;
      const checkout = await checkoutFor(caller, id, secret);
      const session = await applyPromotion(context, caller, checkout, body.code);
      res.json(couponAnswer(session));
    },
  );

  app.delete('/v1/checkouts/:id/coupon', readParts, async (req, res) => {
    const { id } = res.locals.input.params as CheckoutIdParams;
    const { client_secret } = res.locals.input.query as ClientSecretQuery;
    const checkout: Session = await checkoutFor(callerOf(req), id, client_secret);
    const session = await removePromotion(context, checkout);
    res.json(couponAnswer(session));
  });

  app.use('/v1/checkouts', answerSdkRefusals);
}

/** A browser page's origin (scheme, host, port), as its `Origin` header gives it; undefined for anything else. */
function pageOrigin(header: string | undefined): string | undefined {
  return header !== undefined && /^https?:\/\/[a-z0-9.-]{1,253}(:\d{1,5})?$/i.test(header) ? header : undefined;
}
