import { CheckoutSessionIdParams, newId, notFound } from '@billing/contracts';
import { type EventStoreTransaction, type RecordedEvent, handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, validate } from '@billing/service';
import type { Express, RequestHandler } from 'express';
import { dependenciesOf } from '../dependencies';
import { checkedMode, parseCreateRequest, sessionCreatedData } from './create';
import { decide } from './decide';
import { findCallerSession, toCreatedResource, toSessionResource } from './queries';
import { projectSessions } from './read-model';
import { type SessionState, asSessionEvent, evolve, initialState, sessionStream } from './session';
import { lookUpProduct, releasePromotion, reservePromotion } from './upstream';

export const sessionAggregate = {
  initialState,
  evolve: (state: SessionState, event: RecordedEvent) => evolve(state, asSessionEvent(event)),
  decide,
};

export const sessionProjector = (schema: string) => (tx: EventStoreTransaction, events: RecordedEvent[]) =>
  projectSessions(tx, schema, events);

/** Public routes come through the gateway, which vouches for the caller in identity headers. */
const requireCaller: RequestHandler = (req, _res, next) => {
  callerOf(req);
  next();
};

export function mountSessionRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const { schema } = store.tables;
  const deps = dependenciesOf(context);
  const project = sessionProjector(schema);

  app.use('/v1/checkout', requireCaller);

  app.post('/v1/checkout/sessions', async (req, res) => {
    const caller = callerOf(req);
    const request = parseCreateRequest(req.body, caller);
    const product = await lookUpProduct(deps.catalog(), caller, request);
    const mode = checkedMode(request, product);
    const sessionId = newId('checkoutSession');
    const redemption = request.promotion_code
      ? await reservePromotion(deps.promotions(), caller, {
          code: request.promotion_code,
          amount: product.price,
          product_id: product.id,
          external_id: request.external_customer_id,
          checkout_session_id: sessionId,
        })
      : null;
    const at = now();
    const data = sessionCreatedData({ sessionId, caller, request, product, mode, redemption, now: at });
    try {
      const { state } = await handleCommand(
        store,
        sessionStream(sessionId),
        sessionAggregate,
        { type: 'CreateSession', data },
        { organization: caller.organization, environment: caller.environment, occurredAt: at, project },
      );
      if (state.status === 'Empty') throw new Error('session not created');
      res.status(201).json(toCreatedResource(state.session, deps.checkoutUrl));
    } catch (error) {
      if (redemption) await releasePromotion(deps.promotions(), caller, redemption.redemption_id).catch(() => {});
      throw error;
    }
  });

  app.get('/v1/checkout/sessions/:id', validate({ params: CheckoutSessionIdParams }), async (req, res) => {
    const { id } = res.locals.input.params;
    const session = await findCallerSession(store.database, schema, callerOf(req), id);
    if (!session) throw notFound(`No such checkout session: ${id}`);
    res.json(toSessionResource(session, now()));
  });
}
