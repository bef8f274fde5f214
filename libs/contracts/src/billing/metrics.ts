import { z } from 'zod';
import { ErrorEnvelope, invalidParameters } from '../shared/errors';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { Environment } from '../events/envelope';

/** The dashboard's days are calendar days in Taiwan (UTC+8 all year, no daylight saving). */
export const METRICS_TIME_ZONE = 'Asia/Taipei';
const TAIPEI_OFFSET_MS = 8 * 3600_000;
const DAY_MS = 24 * 3600_000;
export const METRICS_MAX_DAYS = 366;
export const METRICS_DEFAULT_DAYS = 30;

/** The Taipei calendar day of an instant, `YYYY-MM-DD`. */
export const taipeiDateOf = (instant: Date | string): string =>
  new Date(new Date(instant).getTime() + TAIPEI_OFFSET_MS).toISOString().slice(0, 10);

/** When a Taipei day starts, in ms since the epoch. */
export const taipeiDayStart = (date: string): number => Date.parse(`${date}T00:00:00.000Z`) - TAIPEI_OFFSET_MS;

/** When a Taipei day ends (the next one starts), in ms since the epoch. */
export const taipeiDayEnd = (date: string): number => taipeiDayStart(date) + DAY_MS;

/** Every day from `from` to `to`, both included. */
export function taipeiDays(from: string, to: string): string[] {
  const days: string[] = [];
  for (let at = Date.parse(`${from}T00:00:00Z`); at <= Date.parse(`${to}T00:00:00Z`); at += DAY_MS) {
    days.push(new Date(at).toISOString().slice(0, 10));
  }
  return days;
}

const daysBetween = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / DAY_MS + 1;

/**
 * The days a metrics query asks for: `to` defaults to today in Taipei (by `now`), `from` to 29
 * days before `to`. More than 366 days, or `from` after `to`: 400 naming `from`.
 */
export function metricsRange(query: Pick<MetricsQuery, 'from' | 'to'>, now: Date): { from: string; to: string } {
  const to = query.to ?? taipeiDateOf(now);
  const from =
    query.from ??
    new Date(Date.parse(`${to}T00:00:00Z`) - (METRICS_DEFAULT_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
  const problem = rangeProblem(from, to);
  if (problem) throw invalidParameters('query', [{ path: 'from', message: problem, code: 'custom' }]);
  return { from, to };
}

function rangeProblem(from: string, to: string): string | undefined {
  const days = daysBetween(from, to);
  if (days < 1) return '`from` must not be after `to`';
  if (days > METRICS_MAX_DAYS) return `At most ${METRICS_MAX_DAYS} days`;
  return undefined;
}

const CalendarDate = z
  .string()
  .max(10)
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'Give a date as YYYY-MM-DD')
  .refine(
    (value) =>
      !Number.isNaN(Date.parse(`${value}T00:00:00Z`)) && new Date(`${value}T00:00:00Z`).toISOString().startsWith(value),
    {
      message: 'No such date',
    },
  );

export const MetricsQuery = z
  .object({
    environment: Environment,
    from: CalendarDate.optional().describe('First day (Asia/Taipei), YYYY-MM-DD; default 29 days before `to`'),
    to: CalendarDate.optional().describe('Last day (Asia/Taipei), YYYY-MM-DD; default today'),
  })
  .superRefine((query, context) => {
    const problem = query.from && query.to ? rangeProblem(query.from, query.to) : undefined;
    if (problem) context.addIssue({ code: 'custom', path: ['from'], message: problem });
  })
  .meta({ id: 'MetricsQuery' });
export type MetricsQuery = z.infer<typeof MetricsQuery>;

export const MetricsDay = z
  .object({
    date: z.string().describe('YYYY-MM-DD, Asia/Taipei'),
    mrr: z.int().min(0).describe('TWD: monthly_equivalent of the subscriptions active at the end of the day'),
    active_subscriptions: z.int().min(0).describe('At the end of the day'),
    new_subscriptions: z.int().min(0),
    churned_subscriptions: z.int().min(0),
    payments_count: z.int().min(0),
    payments_amount: z.int().min(0).describe('TWD'),
    failed_payments_count: z.int().min(0),
  })
  .meta({ id: 'MetricsDay' });
export type MetricsDay = z.infer<typeof MetricsDay>;

export const Metrics = z
  .object({
    object: z.literal('metrics'),
    environment: Environment,
    currency: z.literal('TWD'),
    from: z.string(),
    to: z.string(),
    series: z.array(MetricsDay).describe('One entry per day, zeros included'),
  })
  .meta({ id: 'Metrics' });
export type Metrics = z.infer<typeof Metrics>;

export const emptyMetricsDay = (date: string): MetricsDay => ({
  date,
  mrr: 0,
  active_subscriptions: 0,
  new_subscriptions: 0,
  churned_subscriptions: 0,
  payments_count: 0,
  payments_amount: 0,
  failed_payments_count: 0,
});

/** A range of days, every count zero: what each service fills in. */
export function emptyMetrics(environment: Environment, range: { from: string; to: string }): Metrics {
  const series = taipeiDays(range.from, range.to).map(emptyMetricsDay);
  return { object: 'metrics', environment, currency: 'TWD', ...range, series };
}

/** The entry of the Taipei day an instant falls on; undefined outside the range. */
export function metricsDayOf(metrics: Metrics, instant: Date | string | number): MetricsDay | undefined {
  const index = (Date.parse(taipeiDateOf(new Date(instant))) - Date.parse(metrics.from)) / DAY_MS;
  return metrics.series[index];
}

/** Day by day sums of several services' parts of the same range. */
export function sumMetrics(parts: Metrics[]): Metrics {
  const [first] = parts;
  if (!first) throw new Error('sumMetrics needs at least one part');
  const series = first.series.map((day, index) => {
    const total = emptyMetricsDay(day.date);
    for (const part of parts) {
      const other = part.series[index]!;
      for (const field of Object.keys(total) as Array<keyof MetricsDay>) {
        if (field !== 'date') total[field] += other[field];
      }
    }
    return total;
  });
  return { ...first, series };
}

// ---------------------------------------------------------------- the public analytics read

export const AnalyticsInterval = z.enum(['day', 'month']).meta({ id: 'AnalyticsInterval' });
export type AnalyticsInterval = z.infer<typeof AnalyticsInterval>;

/** `GET /v1/analytics/metrics`: the dashboard's series for a merchant's own tools (docs/analytics.md). */
export const AnalyticsQuery = z
  .object({
    from: CalendarDate.optional().describe('First day (Asia/Taipei), YYYY-MM-DD; default 29 days before `to`'),
    to: CalendarDate.optional().describe('Last day (Asia/Taipei), YYYY-MM-DD; default today'),
    interval: AnalyticsInterval.default('day').describe('One entry per day, or per calendar month of the range'),
  })
  .superRefine((query, context) => {
    const problem = query.from && query.to ? rangeProblem(query.from, query.to) : undefined;
    if (problem) context.addIssue({ code: 'custom', path: ['from'], message: problem });
  })
  .meta({ id: 'AnalyticsQuery' });
export type AnalyticsQuery = z.infer<typeof AnalyticsQuery>;

export const AnalyticsPeriod = z
  .object({
    period_start: z.string().describe('YYYY-MM-DD, Asia/Taipei: the first day of the period within the range'),
    period_end: z.string().describe('YYYY-MM-DD, Asia/Taipei: its last day within the range'),
    mrr: z.int().min(0).describe('TWD: monthly recurring revenue at the end of the period'),
    active_subscriptions: z.int().min(0).describe('At the end of the period'),
    new_subscriptions: z.int().min(0),
    churned_subscriptions: z.int().min(0),
    revenue: z.int().min(0).describe('TWD paid in the period: invoices and one-time orders'),
    payments_count: z.int().min(0),
    failed_payments_count: z.int().min(0),
  })
  .meta({ id: 'AnalyticsPeriod' });
export type AnalyticsPeriod = z.infer<typeof AnalyticsPeriod>;

export const AnalyticsMetrics = z
  .object({
    object: z.literal('analytics.metrics'),
    interval: AnalyticsInterval,
    time_zone: z.literal(METRICS_TIME_ZONE),
    currency: z.literal('TWD'),
    from: z.string(),
    to: z.string(),
    data: z.array(AnalyticsPeriod).describe('Oldest first, every period of the range, zeros included'),
    livemode: z.boolean(),
  })
  .meta({ id: 'AnalyticsMetrics' });
export type AnalyticsMetrics = z.infer<typeof AnalyticsMetrics>;

/**
 * The daily series as periods of `interval`: a month's MRR and active subscriptions are those of
 * its last day in the range, its counts and revenue the sums of its days.
 */
export function periodsOf(series: MetricsDay[], interval: AnalyticsInterval): AnalyticsPeriod[] {
  const periods: AnalyticsPeriod[] = [];
  for (const day of series) {
    const last = periods.at(-1);
    if (last && interval === 'month' && last.period_start.slice(0, 7) === day.date.slice(0, 7)) {
      Object.assign(last, {
        period_end: day.date,
        mrr: day.mrr,
        active_subscriptions: day.active_subscriptions,
        new_subscriptions: last.new_subscriptions + day.new_subscriptions,
        churned_subscriptions: last.churned_subscriptions + day.churned_subscriptions,
        revenue: last.revenue + day.payments_amount,
        payments_count: last.payments_count + day.payments_count,
        failed_payments_count: last.failed_payments_count + day.failed_payments_count,
      });
      continue;
    }
    periods.push({
      period_start: day.date,
      period_end: day.date,
      mrr: day.mrr,
      active_subscriptions: day.active_subscriptions,
      new_subscriptions: day.new_subscriptions,
      churned_subscriptions: day.churned_subscriptions,
      revenue: day.payments_amount,
      payments_count: day.payments_count,
      failed_payments_count: day.failed_payments_count,
    });
  }
  return periods;
}

export function registerAnalyticsRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  return registry.route({
    method: 'get',
    path: '/analytics/metrics',
    oauthScope: 'analytics:read',
    summary: 'MRR, active, new and churned subscriptions, revenue and payments per day or month (Asia/Taipei)',
    tags: ['Analytics'],
    security: ['secretKey'],
    query: AnalyticsQuery,
    responses: {
      200: { description: 'Every period of the range, oldest first', schema: AnalyticsMetrics },
      400: invalidParametersResponse,
      401: { description: 'unauthorized: a Secret Key is needed', schema: ErrorEnvelope },
    },
  });
}
