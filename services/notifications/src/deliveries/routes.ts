import { ListWebhookDeliveriesQuery, type WebhookDelivery, idText, notFound, toList } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { findEndpoint } from '../endpoints/queries';
import { adminOrganizationOf } from '@billing/service';
import { deliveryAggregate } from './aggregate';
import { findDelivery, pageOfDeliveries } from './queries';

const Id = z.object({ id: idText().min(1) });

const listPage = ({ deliveries, hasMore }: { deliveries: WebhookDelivery[]; hasMore: boolean }) => ({
  ...toList(deliveries, deliveries[0]?.livemode ?? false),
  has_more: hasMore,
});

/** The delivery log (admin API): every attempt per endpoint and per event, and replays. */
export function mountDeliveryRoutes(app: Express, { store, now }: ServiceContext, wake: () => void): void {
  const { schema } = store.tables;
  const db = store.database;

  app.get(
    '/admin/webhook_endpoints/:id/deliveries',
    validate({ params: Id, query: ListWebhookDeliveriesQuery }),
    async (req, res) => {
      const organization = adminOrganizationOf(req);
      const { params, query } = res.locals.input;
      if (!(await findEndpoint(db, schema, { organization }, params.id))) {
        throw notFound(`No such webhook endpoint: ${params.id}`);
      }
      const page = await pageOfDeliveries(db, schema, { organization, endpointId: params.id, ...query });
      res.json(listPage(page));
    },
  );

  app.get(
    '/admin/webhook_events/:id/deliveries',
    validate({ params: Id, query: ListWebhookDeliveriesQuery }),
    async (req, res) => {
      const { params, query } = res.locals.input;
      const page = await pageOfDeliveries(db, schema, {
        organization: adminOrganizationOf(req),
        eventId: params.id,
        ...query,
      });
      res.json(listPage(page));
    },
  );

  app.get('/admin/webhook_deliveries/:id', validate({ params: Id }), async (req, res) => {
    const { id } = res.locals.input.params;
    const delivery = await findDelivery(db, schema, adminOrganizationOf(req), id);
    if (!delivery) throw notFound(`No such webhook delivery: ${id}`);
    res.json(delivery);
  });

  /** A FAILED delivery is attempted again now, with a fresh retry schedule; 409 otherwise. */
  app.post('/admin/webhook_deliveries/:id/replay', validate({ params: Id }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const { id } = res.locals.input.params;
    const before = await findDelivery(db, schema, organization, id);
    if (!before) throw notFound(`No such webhook delivery: ${id}`);
    await deliveryAggregate.handle(
      store,
      id,
      { type: 'ReplayDelivery', data: { deliveryId: id, now: now() } },
      { organization, environment: before.livemode ? 'PRODUCTION' : 'SANDBOX', occurredAt: now() },
    );
    wake();
    const after = await findDelivery(db, schema, organization, id);
    res.status(202).json(after);
  });
}
