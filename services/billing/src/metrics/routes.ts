import { MetricsQuery, metricsRange } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { billingMetrics } from './daily';

/** `GET /admin/metrics`: billing's part of the admin API's metrics; the gateway adds checkout's. */
export function mountMetricsRoutes(app: Express, context: ServiceContext): void {
  app.get('/admin/metrics', validate({ query: MetricsQuery }), async (req, res) => {
    const organization = adminOrganizationOf(req);
    const query = res.locals.input.query as MetricsQuery;
    const range = metricsRange(query, context.now());
    const tenant = { organization, environment: query.environment };
    const database = context.infrastructure.database;
    res.json(await billingMetrics(database, context.store.tables.schema, tenant, range));
  });
}
