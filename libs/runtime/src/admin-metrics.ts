import { MetricsQuery, metricsRange } from '@billing/contracts';
import { adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { readDailyMetrics } from './daily-metrics';
import type { ServiceContext } from './run-service';

/**
 * `GET /admin/metrics`: the service's part of the dashboard's metrics, read from its daily
 * projection (`daily-metrics.ts`); the gateway adds the services' parts (docs/dashboard-api.md).
 */
export function mountMetricsPart(app: Express, context: ServiceContext): void {
  app.get('/admin/metrics', validate({ query: MetricsQuery }), async (req, res) => {
    const query = res.locals.input.query as MetricsQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const range = metricsRange(query, context.now());
    res.json(await readDailyMetrics(context.infrastructure.database, context.store.tables.schema, tenant, range));
  });
}
