import { type Meter, USAGE_LIMITS, type UsageEventInput, usageEventRefused } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { timesOfCustomers } from '../../customers/queries';
import { metersByKey } from '../meters/read-model';
import { type StoredUsageEvent, insertUsageEvents } from './store';

const DAY_MS = 86_400_000;
const MINUTE_MS = 60_000;

/** What a report of usage did: every event is stored now or was before. */
export type UsageIntake = { received: number; stored: number; duplicates: number; spendsCredits: boolean };

/**
 * Takes a report of usage events (the API's, or a message of the usage topic): every event
 * names an active meter and a customer of the tenant and a time in range, or nothing is stored (422 at
 * the first event that does not, `pathOf(i)` naming it). The events are stored in one statement
 * before this answers; an id stored before is counted a duplicate and changes nothing.
 */
export async function takeUsage(
  context: ServiceContext,
  tenant: Tenant,
  inputs: UsageEventInput[],
  pathOf: (index: number) => string,
): Promise<UsageIntake> {
  const { database, tables } = context.store;
  const meters = await metersByKey(database, tables.schema, tenant, distinct(inputs.map((e) => e.meter)));
  const unknownMeter = inputs.findIndex((e) => !meters.has(e.meter));
  if (unknownMeter >= 0) {
    const key = inputs[unknownMeter]!.meter;
    throw usageEventRefused(
      `${pathOf(unknownMeter)}meter`,
      'unknown_meter',
      `No meter with key ${key}; create it first`,
    );
  }
  const inactiveMeter = inputs.findIndex((e) => meters.get(e.meter)!.status === 'inactive');
  if (inactiveMeter >= 0) {
    const key = inputs[inactiveMeter]!.meter;
    throw usageEventRefused(
      `${pathOf(inactiveMeter)}meter`,
      'meter_inactive',
      `The meter ${key} is deactivated; reactivate it to report usage to it`,
    );
  }
  const customerTimes = await timesOfCustomers(context, tenant, distinct(inputs.map((e) => e.customer_id)));
  const events = inputs.map((input, i) => storedEvent(input, meters.get(input.meter)!, customerTimes, pathOf(i)));
  const stored = await insertUsageEvents(database, tables.schema, tenant, events, context.now());
  return {
    received: inputs.length,
    stored,
    duplicates: inputs.length - stored,
    spendsCredits: stored > 0 && events.some((e) => e.credits !== null),
  };
}

function storedEvent(input: UsageEventInput, meter: Meter, times: Map<string, Date>, path: string): StoredUsageEvent {
  const now = times.get(input.customer_id);
  if (!now) {
    throw usageEventRefused(`${path}customer_id`, 'unknown_customer', `No such customer: ${input.customer_id}`);
  }
  const occurredAt = input.timestamp === undefined ? now : new Date(input.timestamp);
  const earliest = now.getTime() - USAGE_LIMITS.pastDays * DAY_MS;
  const latest = now.getTime() + USAGE_LIMITS.futureMinutes * MINUTE_MS;
  if (occurredAt.getTime() < earliest || occurredAt.getTime() > latest) {
    const message = `timestamp must be within ${USAGE_LIMITS.pastDays} days before ${now.toISOString()} and ${USAGE_LIMITS.futureMinutes} minutes after`;
    throw usageEventRefused(`${path}timestamp`, 'timestamp_out_of_range', message);
  }
  return {
    id: input.id,
    customerId: input.customer_id,
    meter: meter.key,
    quantity: input.quantity,
    occurredAt,
    credits: creditsOf(meter, input.quantity),
  };
}

/** The credits an event spends: a unit's (a count meter: an event's) credits; null for a meter that spends none. */
export function creditsOf(meter: Pick<Meter, 'aggregation' | 'credits_per_unit'>, quantity: number): number | null {
  if (meter.credits_per_unit === null) return null;
  return meter.aggregation === 'count' ? meter.credits_per_unit : quantity * meter.credits_per_unit;
}

const distinct = (values: string[]) => [...new Set(values)];
