import {
  eventsOfReport,
  type UsageReport,
  type UsageSummary,
  UsageSummaryQuery,
  CreditsCustomerParams,
  USAGE_LIMITS,
  invalidParameters,
  livemodeOf,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, secretCallerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { requireCustomer } from '../../customers/queries';
import { timeOn } from '../../test-clocks/read-model';
import { listMeters } from '../meters/read-model';
import { takeUsage } from './intake';
import { quantityOf, usageOf } from './store';

const DEFAULT_SUMMARY_DAYS = 30;

/** `/v1/usage_events` and a customer's usage (Secret Key; docs/usage.md). */
export function mountUsageRoutes(app: Express, context: ServiceContext, onCreditsToSpend: () => void): void {
  const { store } = context;
  const { schema } = store.tables;
  const db = store.database;

  app.post('/v1/usage_events', async (req, res) => {
    const caller = secretCallerOf(req);
    const tenant: Tenant = { organization: caller.organization, environment: caller.environment };
    const { events, batch } = eventsOfReport(req.body);
    const intake = await takeUsage(context, tenant, events, (i) => (batch ? `events.${i}.` : ''));
    if (intake.spendsCredits) onCreditsToSpend();
    const answer: UsageReport = {
      object: 'usage_report',
      received: intake.received,
      stored: intake.stored,
      duplicates: intake.duplicates,
      livemode: livemodeOf(tenant.environment),
    };
    res.status(202).json(answer);
  });

  /** The latest time an event of the customer may have: a few minutes after its time (USAGE_LIMITS.futureMinutes). */
  const latestEventTime = async (tenant: Tenant, clock: string | null) => {
    const now = await timeOn(db, schema, tenant, clock, context.now);
    return new Date(now.getTime() + USAGE_LIMITS.futureMinutes * 60_000);
  };

  app.get(
    '/v1/customers/:id/usage',
    validate({ params: CreditsCustomerParams, query: UsageSummaryQuery }),
    async (req, res) => {
      const { params, query } = res.locals.input;
      const caller = secretCallerOf(req);
      const tenant: Tenant = { organization: caller.organization, environment: caller.environment };
      const customer = await requireCustomer(db, schema, tenant, { by: 'id', value: params.id });
      const to = query.to ? new Date(query.to) : await latestEventTime(tenant, customer.test_clock);
      const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_SUMMARY_DAYS * 86_400_000);
      if (from >= to)
        throw invalidParameters('query', [{ path: 'from', code: 'not_before_to', message: 'from must be before to' }]);
      const [meters, totals] = await Promise.all([
        listMeters(db, schema, tenant),
        usageOf(db, schema, tenant, params.id, { from, to }),
      ]);
      const summary: UsageSummary = {
        object: 'usage_summary',
        customer_id: params.id,
        from: from.toISOString(),
        to: to.toISOString(),
        meters: meters.map((meter) => {
          const total = totals.get(meter.key) ?? { events: 0, sum: 0, max: 0 };
          const quantity = quantityOf(total, meter.aggregation);
          return { meter: meter.key, aggregation: meter.aggregation, quantity, events: total.events };
        }),
        livemode: livemodeOf(tenant.environment),
      };
      res.json(summary);
    },
  );
}
