import { ListWebhookEventsQuery, WebhookEventQuery, idText, livemodeOf, notFound, toList } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { findEvent, pageOfEvents } from './queries';

const Id = z.object({ id: idText().min(1) });

/** The organization's public events (admin API): what webhooks and Kafka carry, kept 30 days. */
export function mountEventRoutes(app: Express, { store }: ServiceContext): void {
  const { schema } = store.tables;
  const db = store.database;

  app.get('/admin/webhook_events', validate({ query: ListWebhookEventsQuery }), async (req, res) => {
    const { environment, ...query } = res.locals.input.query as z.infer<typeof ListWebhookEventsQuery>;
    const tenant = { organization: adminOrganizationOf(req), environment };
    const { events, hasMore } = await pageOfEvents(db, schema, tenant, query);
    res.json({ ...toList(events, livemodeOf(environment)), has_more: hasMore });
  });

  app.get('/admin/webhook_events/:id', validate({ params: Id, query: WebhookEventQuery }), async (req, res) => {
    const { params, query } = res.locals.input;
    const { environment } = query as z.infer<typeof WebhookEventQuery>;
    const { id } = params as z.infer<typeof Id>;
    const event = await findEvent(db, schema, { organization: adminOrganizationOf(req), environment }, id);
    if (!event) throw notFound(`No such event: ${id}`);
    res.json(event);
  });
}
