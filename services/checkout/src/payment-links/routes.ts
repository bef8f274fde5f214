import {
  ApiError,
  type CallerIdentity,
  type CreateCheckoutSessionBody,
  CreatePaymentLinkBody,
  ListPaymentLinksQuery,
  PaymentLinkIdParams,
  UpdatePaymentLinkBody,
  livemodeOf,
  newId,
  notFound,
  randomBase62,
  unauthorized,
  validationError,
} from '@billing/contracts';
import type { EventStoreTransaction } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, validate } from '@billing/service';
import type { Express, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { dependenciesOf, serviceCaller } from '../dependencies';
import { chooseLocale, messagesFor } from '../hosted-page/messages';
import type { PageContext } from '../hosted-page/render';
import { receiptOf } from '../hosted-page/receipt';
import {
  renderLinkCanceled,
  renderLinkNotFound,
  renderLinkThanks,
  renderLinkUnavailable,
} from '../hosted-page/payment-link-pages';
import { findMerchant } from '@billing/runtime';
import { findSession } from '../sessions/queries';
import { createSession } from '../sessions/create';
import { pageUrl } from '../sessions/resource';
import { redirectUrlViolation } from '../sessions/rules';
import { lookUpProduct } from '../sessions/upstream';
import { paymentLinkAggregate } from './aggregate';
import { type LinkSettings, type PaymentLinkState, type PaymentLinkView, isClosed } from './link';
import {
  findCallerLink,
  findLinkByUrlId,
  linkIdOfSession,
  linkUrl,
  listCallerLinks,
  toPaymentLinkResource,
} from './queries';
import { recordLinkSession } from './read-model';

/** The spec: payment links take the Secret Key only. */
const requireSecretKey: RequestHandler = (req, _res, next) => {
  const caller = callerOf(req);
  next(caller.keyKind === 'secret' ? undefined : unauthorized('Payment links require a Secret Key'));
};

/** The URL parameters a visit passes on into the session metadata (`email` and `promo` are used, not stored). */
export const ATTRIBUTION_PARAMS = ['ref', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content'];

const firstString = (value: unknown): string | undefined => {
  const v = Array.isArray(value) ? value[0] : value;
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
};

function successUrlViolation(value: string | null | undefined, caller: CallerIdentity) {
  if (value === null || value === undefined) return;
  const detail = redirectUrlViolation('successUrl', value, caller.environment);
  if (detail) throw validationError([detail]);
}

export function mountPaymentLinkRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const { schema } = store.tables;
  const db = store.database;
  const deps = dependenciesOf(context);
  /** A link's commands are written under its organization and environment. */
  const asOwner = (link: Pick<PaymentLinkView, 'organization' | 'environment'>) => ({
    organization: link.organization,
    environment: link.environment,
    occurredAt: now(),
  });
  const resource = (link: PaymentLinkView) => toPaymentLinkResource(link, deps.paymentLinkUrl);
  const existing = (state: PaymentLinkState) => {
    if (state.status === 'Empty') throw new Error('payment link missing after append');
    return state.link;
  };
  const callerLink = async (req: Request, id: string) => {
    const link = await findCallerLink(db, schema, callerOf(req), id);
    if (!link) throw notFound(`No such payment link: ${id}`);
    return link;
  };

  app.use('/v1/payment-links', requireSecretKey);

  app.post('/v1/payment-links', validate({ body: CreatePaymentLinkBody }), async (req, res) => {
    const caller = callerOf(req);
    const body: CreatePaymentLinkBody = res.locals.input.body;
    successUrlViolation(body.successUrl, caller);
    const product = await lookUpProduct(
      deps.catalog(),
      deps.products,
      caller,
      body.productId ? { product_id: body.productId } : { product_slug: body.productSlug },
    );
    const id = newId('paymentLink');
    const { state } = await paymentLinkAggregate.handle(
      store,
      id,
      {
        type: 'CreatePaymentLink',
        data: {
          id,
          url_id: randomBase62(10),
          organization: caller.organization,
          environment: caller.environment,
          active: true,
          product: {
            id: product.id,
            name: product.name,
            slug: product.slug ?? null,
            price: product.price,
            currency: product.currency ?? 'TWD',
            type: product.type,
          },
          promotion_code: body.promotionCode ?? null,
          collect_payment_method: body.collectPaymentMethod,
          success_url: body.successUrl ?? null,
          max_completions: body.maxCompletions,
          metadata: body.metadata ?? null,
          locale: body.locale ?? null,
          created_at: now().toISOString(),
        },
      },
      asOwner(caller),
    );
    res.status(201).json(resource(existing(state)));
  });

  app.get('/v1/payment-links', validate({ query: ListPaymentLinksQuery }), async (req, res) => {
    const caller = callerOf(req);
    const { links, hasMore } = await listCallerLinks(db, schema, caller, res.locals.input.query);
    res.json({
      object: 'list',
      data: links.map(resource),
      has_more: hasMore,
      livemode: livemodeOf(caller.environment),
    });
  });

  app.get('/v1/payment-links/:id', validate({ params: PaymentLinkIdParams }), async (req, res) => {
    res.json(resource(await callerLink(req, res.locals.input.params.id)));
  });

  app.patch(
    '/v1/payment-links/:id',
    validate({ params: PaymentLinkIdParams, body: UpdatePaymentLinkBody }),
    async (req, res) => {
      const body: UpdatePaymentLinkBody = res.locals.input.body;
      successUrlViolation(body.successUrl, callerOf(req));
      const link = await callerLink(req, res.locals.input.params.id);
      const changes: Partial<LinkSettings> = {
        active: body.active,
        promotion_code: body.promotionCode,
        collect_payment_method: body.collectPaymentMethod,
        success_url: body.successUrl,
        max_completions: body.maxCompletions,
        metadata: body.metadata,
        locale: body.locale,
      };
      const { state } = await paymentLinkAggregate.handle(
        store,
        link.id,
        { type: 'UpdatePaymentLink', data: { linkId: link.id, changes, now: now() } },
        asOwner(link),
      );
      res.json(resource(existing(state)));
    },
  );

  app.delete('/v1/payment-links/:id', validate({ params: PaymentLinkIdParams }), async (req, res) => {
    const link = await callerLink(req, res.locals.input.params.id);
    const deactivate = { linkId: link.id, changes: { active: false }, now: now() };
    await paymentLinkAggregate.handle(store, link.id, { type: 'UpdatePaymentLink', data: deactivate }, asOwner(link));
    res.json({ id: link.id, deleted: true });
  });

  const pageOf = async (req: Request, organization: string | null, locale?: string | null): Promise<PageContext> => ({
    t: messagesFor(chooseLocale(locale, req.get('accept-language'))),
    merchant: organization ? await findMerchant(db, schema, organization) : null,
  });
  const send = (res: Response, status: number, html: string) => res.status(status).type('html').send(html);

  /**
   * The shareable URL. No key: the url_id is the capability. Counts the visit, opens a session
   * and redirects to it; `?locale=zh-TW|en` chooses the checkout page's language.
   */
  app.get('/pay/:url_id', async (req, res) => {
    const link = await findLinkByUrlId(db, schema, String(req.params.url_id));
    const query = req.query as Record<string, unknown>;
    const locale = firstString(query.locale) ?? link?.locale ?? undefined;
    const page = await pageOf(req, link?.organization ?? null, locale);
    if (!link) {
      send(res, 404, renderLinkNotFound(page));
      return;
    }
    if (isClosed(link)) {
      send(res, 410, renderLinkUnavailable(page, link.active ? 'soldOut' : 'inactive'));
      return;
    }
    await paymentLinkAggregate.handle(
      store,
      link.id,
      { type: 'CountVisit', data: { linkId: link.id, now: now() } },
      asOwner(link),
    );

    const email = firstString(query.email);
    const promo = firstString(query.promo) ?? link.promotion_code ?? undefined;
    const attribution = Object.fromEntries(
      ATTRIBUTION_PARAMS.flatMap((key) => {
        const value = firstString(query[key]);
        return value === undefined ? [] : [[key, value.slice(0, 500)]];
      }),
    );
    const metadata = { ...(link.metadata ?? {}), ...attribution };
    const url = linkUrl(deps.paymentLinkUrl, link.url_id);
    const request: CreateCheckoutSessionBody = {
      product_id: link.product.id,
      success_url: link.success_url ?? `${url}/thanks?session_id={CHECKOUT_SESSION_ID}`,
      // "Cancel and return" leaves without opening another session or counting another visit.
      cancel_url: `${url}/canceled`,
      // A malformed `email` is ignored: the buyer types one on the page instead.
      customer_email: email && z.email().safeParse(email).success ? email : undefined,
      promotion_code: promo,
      // A link's code comes from the link or its `promo` query, not from a field on the page.
      allow_promotion_codes: false,
      collect_payment_method: link.collect_payment_method,
      metadata: Object.keys(metadata).length > 0 ? metadata : undefined,
      ...(locale === 'zh-TW' || locale === 'en' ? { locale } : {}),
    };
    const caller = serviceCaller(link.organization, link.environment);
    const alsoProject = (tx: EventStoreTransaction, sessionId: string) =>
      recordLinkSession(tx, schema, sessionId, link.id);
    let session;
    try {
      session = await createSession(context, caller, request, { alsoProject, paymentLinkId: link.id }).catch(
        async (error: unknown) => {
          // A promotion code that cannot be applied does not stop the sale: the session opens at full price.
          const refusedPromo =
            error instanceof ApiError && error.status === 422 && request.promotion_code !== undefined;
          if (!refusedPromo) throw error;
          context.logger.warn({ link: link.id, code: request.promotion_code }, 'payment link promotion code refused');
          return createSession(
            context,
            caller,
            { ...request, promotion_code: undefined },
            { alsoProject, paymentLinkId: link.id },
          );
        },
      );
    } catch (error) {
      // The buyer is in a browser: a product gone from the catalog or a service down is a page, not JSON.
      if (!(error instanceof ApiError)) throw error;
      const gone = error.status === 404;
      send(res, gone ? 410 : error.status, renderLinkUnavailable(page, gone ? 'productGone' : 'down'));
      return;
    }
    const counted = { linkId: link.id, sessionId: session.id, now: now() };
    await paymentLinkAggregate.handle(store, link.id, { type: 'CountSession', data: counted }, asOwner(link));
    res.redirect(303, pageUrl(deps.checkoutUrl, session.id));
  });

  /**
   * Where a link without `success_url` lands after payment: the product, the amount paid, the
   * date and the e-invoice of the paid session the link opened, and the way back.
   */
  app.get('/pay/:url_id/thanks', async (req, res) => {
    const link = await findLinkByUrlId(db, schema, String(req.params.url_id));
    const sessionId = firstString((req.query as Record<string, unknown>).session_id);
    const session =
      link && sessionId && (await linkIdOfSession(db, schema, sessionId)) === link.id
        ? await findSession(db, schema, sessionId)
        : null;
    const page = await pageOf(req, link?.organization ?? null, session?.locale);
    const receipt = session?.status === 'COMPLETE' ? await receiptOf(context, session) : undefined;
    const url = link ? linkUrl(deps.paymentLinkUrl, link.url_id) : undefined;
    send(res, 200, renderLinkThanks(page, url, receipt));
  });

  /** Where "Cancel and return" of a link's checkout goes: nothing counted, nothing opened. */
  app.get('/pay/:url_id/canceled', async (req, res) => {
    const link = await findLinkByUrlId(db, schema, String(req.params.url_id));
    const page = await pageOf(req, link?.organization ?? null, link?.locale);
    if (!link) {
      send(res, 404, renderLinkNotFound(page));
      return;
    }
    send(res, 200, renderLinkCanceled(page, linkUrl(deps.paymentLinkUrl, link.url_id)));
  });
}
