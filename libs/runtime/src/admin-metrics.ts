import { type Metrics, MetricsQuery, metricsRange } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import { type Tenant, adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import type { ServiceContext } from './run-service';

/** A service's part of the dashboard's metrics over a range of Taipei days. */
export type MetricsPart = (
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  range: { from: string; to: string },
) => Promise<Metrics>;

/** `GET /admin/metrics`: the service's part, which the gateway adds to the others' (docs/dashboard-api.md). */
export function mountMetricsPart(app: Express, context: ServiceContext, part: MetricsPart): void {
  app.get('/admin/metrics', validate({ query: MetricsQuery }), async (req, res) => {
    const query = res.locals.input.query as MetricsQuery;
    const tenant = { organization: adminOrganizationOf(req), environment: query.environment };
    const range = metricsRange(query, context.now());
    res.json(await part(context.infrastructure.database, context.store.tables.schema, tenant, range));
  });
}
