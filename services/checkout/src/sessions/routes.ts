import { CheckoutSessionIdParams, notFound } from '@billing/contracts';
import type { EventStoreTransaction, RecordedEvent } from '@billing/eventstore';
import { countLinkCompletions } from '../payment-links/read-model';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, requireCaller, validate } from '@billing/service';
import type { Express } from 'express';
import { dependenciesOf } from '../dependencies';
import { createSession, parseCreateRequest } from './create';
import { decide } from './decide';
import { findCallerSession } from './queries';
import { toCreatedResource, toSessionResource } from './resource';
import { projectSessions } from './read-model';
import { type SessionState, asSessionEvent, evolve, initialState, sessionStream } from './session';

export const sessionAggregate = {
  initialState,
  evolve: (state: SessionState, event: RecordedEvent) => evolve(state, asSessionEvent(event)),
  decide,
};

/** The session read model, and a completed session's payment link counted in the same transaction. */
export const sessionProjector = (schema: string) => async (tx: EventStoreTransaction, events: RecordedEvent[]) => {
  await projectSessions(tx, schema, events);
  await countLinkCompletions(tx, schema, events);
};

export function mountSessionRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const { schema } = store.tables;
  const deps = dependenciesOf(context);

  app.use('/v1/checkout', requireCaller);

  app.post('/v1/checkout/sessions', async (req, res) => {
    const caller = callerOf(req);
    const request = parseCreateRequest(req.body, caller);
    const session = await createSession(context, caller, request);
    res.status(201).json(toCreatedResource(session, deps.checkoutUrl));
  });

  app.get('/v1/checkout/sessions/:id', validate({ params: CheckoutSessionIdParams }), async (req, res) => {
    const { id } = res.locals.input.params;
    const session = await findCallerSession(store.database, schema, callerOf(req), id);
    if (!session) throw notFound(`No such checkout session: ${id}`);
    res.json(toSessionResource(session, now()));
  });
}
