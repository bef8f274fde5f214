import { CheckoutSessionIdParams, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, requireCaller, validate } from '@billing/service';
import type { Express } from 'express';
import { dependenciesOf } from '../dependencies';
import { createSession, parseCreateRequest } from './create';
import { findCallerSession } from './queries';
import { toCreatedResource, toSessionResource } from './resource';
import { einvoiceEnabled } from './einvoice-enabled';

export function mountSessionRoutes(app: Express, context: ServiceContext): void {
  const { store, now } = context;
  const { schema } = store.tables;
  const deps = dependenciesOf(context);

  app.use('/v1/checkout', requireCaller);

  app.post('/v1/checkout/sessions', async (req, res) => {
    const caller = callerOf(req);
    const request = parseCreateRequest(req.body, caller);
    const session = await createSession(context, caller, request);
    const einvoices = await einvoiceEnabled(context, session.organization, session.environment);
    res.status(201).json(toCreatedResource(session, deps.checkoutUrl, einvoices));
  });

  app.get('/v1/checkout/sessions/:id', validate({ params: CheckoutSessionIdParams }), async (req, res) => {
    const { id } = res.locals.input.params;
    const session = await findCallerSession(store.database, schema, callerOf(req), id);
    if (!session) throw notFound(`No such checkout session: ${id}`);
    res.json(toSessionResource(session, now()));
  });
}
