import {
  AnalyticsQuery,
  type AnalyticsMetrics,
  type CallerIdentity,
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
 * `GET /v1/analytics/metrics` (Secret Key; docs/analytics.md): the dashboard overview's daily
 * series, from the same projections (billing's subscriptions and invoices, checkout's one-time
 * orders), summed as the admin API's metrics are, per day or per calendar month.
 */
export const validAnalyticsQuery = validate({ query: AnalyticsQuery });

/** After `validAnalyticsQuery`, for a caller known by its key. */
export function analyticsMetrics(readService: ServiceRead, now: () => Date): RequestHandler {
  return async (_req, res) => {
    res.locals[ROUTE_PATTERN] = ANALYTICS_METRICS_PATH;
    const caller = res.locals.caller as CallerIdentity;
    const query = res.locals.input.query as AnalyticsQuery;
    const range = metricsRange(query, now());
    const path = `/admin/metrics?${new URLSearchParams({ environment: caller.environment, ...range })}`;
    const parts = await Promise.all(
      (['billing', 'checkout'] as const).map((service) => readService(service, path, caller.organization)),
    );
    const answer: AnalyticsMetrics = {
      object: 'analytics.metrics',
      interval: query.interval,
      time_zone: METRICS_TIME_ZONE,
      currency: 'TWD',
      ...range,
      data: periodsOf(sumMetrics(parts as Metrics[]).series, query.interval),
      livemode: livemodeOf(caller.environment),
    };
    res.json(answer);
  };
}
