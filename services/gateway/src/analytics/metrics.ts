import {
  AnalyticsQuery,
  type AnalyticsMetrics,
  type CallerIdentity,
  type Environment,
  METRICS_TIME_ZONE,
  type Metrics,
  livemodeOf,
  metricsRange,
  periodsOf,
  sumMetrics,
} from '@billing/contracts';
import { ROUTE_PATTERN, validate } from '@billing/service';
import type { RequestHandler } from 'express';
import type { ServiceRead } from '../routing/service-reads';

export const ANALYTICS_METRICS_PATH = '/v1/analytics/metrics';

/**
 * An organization's daily metrics of a range: billing's part (subscriptions, invoices) and
 * checkout's (one-time orders), each from its projection, summed day by day. The admin API's
 * metrics and the public analytics both answer from it.
 */
export async function organizationMetrics(
  readService: ServiceRead,
  tenant: { organization: string; environment: Environment },
  range: { from: string; to: string },
): Promise<Metrics> {
  const path = `/admin/metrics?${new URLSearchParams({ environment: tenant.environment, ...range })}`;
  const parts = await Promise.all(
    (['billing', 'checkout'] as const).map((service) => readService(service, path, tenant.organization)),
  );
  return sumMetrics(parts as Metrics[]);
}

/**
 * `GET /v1/analytics/metrics` (Secret Key; docs/analytics.md): the dashboard overview's daily
 * series (`organizationMetrics`), per day or per calendar month.
 */
export const validAnalyticsQuery = validate({ query: AnalyticsQuery });

/** After `validAnalyticsQuery`, for a caller known by its key. */
export function analyticsMetrics(readService: ServiceRead, now: () => Date): RequestHandler {
  return async (_req, res) => {
    res.locals[ROUTE_PATTERN] = ANALYTICS_METRICS_PATH;
    const caller = res.locals.caller as CallerIdentity;
    const query = res.locals.input.query as AnalyticsQuery;
    const range = metricsRange(query, now());
    const metrics = await organizationMetrics(readService, caller, range);
    const answer: AnalyticsMetrics = {
      object: 'analytics.metrics',
      interval: query.interval,
      time_zone: METRICS_TIME_ZONE,
      currency: 'TWD',
      ...range,
      data: periodsOf(metrics.series, query.interval),
      livemode: livemodeOf(caller.environment),
    };
    res.json(answer);
  };
}
