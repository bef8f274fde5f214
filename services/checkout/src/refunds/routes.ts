import { CreateRefundBody, ListRefundsQuery, RefundIdParams, livemodeOf, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { requireCaller, secretCallerOf, validate } from '@billing/service';
import type { Express, RequestHandler } from 'express';
import { createRefund } from './create';
import { findRefund, listRefunds } from './read-model';

/** `POST /v1/refunds`, `GET /v1/refunds` and `GET /v1/refunds/:id` (Secret Key; docs/decisions/0009-refunds.md). */
export function mountRefundRoutes(app: Express, context: ServiceContext): void {
  const { store } = context;
  const { schema } = store.tables;
  // Who asks comes before what is asked: a Publishable Key is 401 whatever its body.
  const requireSecretKey: RequestHandler = (req, _res, next) => {
    secretCallerOf(req);
    next();
  };
  app.use('/v1/refunds', requireCaller, requireSecretKey);

  app.post('/v1/refunds', validate({ body: CreateRefundBody }), async (req, res) => {
    const caller = secretCallerOf(req);
    const refund = await createRefund(context, caller, res.locals.input.body, req.get('idempotency-key'));
    res.status(201).json(refund);
  });

  app.get('/v1/refunds', validate({ query: ListRefundsQuery }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { refunds, hasMore } = await listRefunds(store.database, schema, caller, res.locals.input.query);
    res.json({ object: 'list', data: refunds, has_more: hasMore, livemode: livemodeOf(caller.environment) });
  });

  app.get('/v1/refunds/:id', validate({ params: RefundIdParams }), async (req, res) => {
    const caller = secretCallerOf(req);
    const { id } = res.locals.input.params;
    const refund = await findRefund(store.database, schema, caller, id);
    if (!refund) throw notFound(`No such refund: ${id}`);
    res.json(refund);
  });
}
