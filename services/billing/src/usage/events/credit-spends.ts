import { ApiError, CREDIT_LIMITS, RESERVED_SPEND_KEY_PREFIX } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { ledgerSettingsOf } from '../../credits/ledger-settings';
import { nudgedPasses } from '../../shared/nudged-passes';
import { spendCredits } from '../../credits/spend';
import { timesOfCustomers } from '../../customers/queries';
import { type CreditsState, usageEventsTable } from './store';

// Usage that spends credits as it arrives (docs/usage.md, Credits): the events of a meter with
// `credits_per_unit` are spent from their customer's balance by this worker, a customer's
// events of one pass in one spend. Run when a report stores such events, and every half second
// (events from the usage topic, another replica's, a pass a crash cut off).

/** Events one pass claims at most. */
const CLAIM_LIMIT = 5000;
/** A claim not finished in this long (its process died) is taken again; spends by key make that safe. */
const CLAIM_LEASE_MS = 30_000;
export const USAGE_SPEND_INTERVAL_MS = 500;

type ClaimedEvent = {
  organization: string;
  environment: Tenant['environment'];
  id: string;
  customer_id: string;
  credits: string;
  credits_state: CreditsState;
  spend_key: string | null;
  received_at: Date;
  occurred_at: Date;
};

/** The key of a customer's events spent together, and of one spent alone (a prefix the API refuses). */
export const groupSpendKey = (firstEventId: string) => `${RESERVED_SPEND_KEY_PREFIX}s:${firstEventId}`;
export const singleSpendKey = (eventId: string) => `${RESERVED_SPEND_KEY_PREFIX}:${eventId}`;

/**
 * One pass: claims the events to spend, writes the keys of the new groups on them, spends the
 * groups (SPEND_CONCURRENCY customers at a time: their ledgers are streams of their own) and
 * marks what was spent, in one statement each. A group that fails is left claimed: the next pass
 * after the lease takes it again with its key. Answers how many events it claimed.
 */
export async function spendUsageCredits(context: ServiceContext): Promise<number> {
  const claimed = await claimEvents(context);
  if (claimed.length === 0) return 0;
  const groups = groupsOf(claimed);
  const keyed = groups.filter((group) => !group.single && group.key === null);
  for (const group of keyed) group.key = groupSpendKey(group.events[0]!.id);
  const keys = new Map(keyed.flatMap((group) => group.events.map((event) => [event, group.key!] as const)));
  await setState(context, [...keys.keys()], 'spending', (event) => keys.get(event)!);
  const payers = await payersOf(context, groups);
  const spent: ClaimedEvent[] = [];
  await eachAtOnce(groups, SPEND_CONCURRENCY, async (group) => {
    try {
      spent.push(...(await spendGroup(context, payers.get(payerKey(group))!, group)));
    } catch (err) {
      context.logger.error(
        { err, customer: group.customerId },
        'spending usage credits failed; retried after the lease',
      );
    }
  });
  await setState(context, spent, 'spent');
  return claimed.length;
}

/** Customers whose usage is spent at once in a pass. */
const SPEND_CONCURRENCY = 8;

async function eachAtOnce<T>(items: T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

async function claimEvents(context: ServiceContext): Promise<ClaimedEvent[]> {
  const { database, tables } = context.store;
  const table = usageEventsTable(tables.schema);
  const now = Date.now(); // the lease is the process's time, not a test clock's
  const { rows } = await database.query<ClaimedEvent>(
    `WITH picked AS (
       SELECT organization, environment, id FROM ${table}
       WHERE credits_state IN ('pending', 'spending', 'single') AND (claimed_at IS NULL OR claimed_at < $1)
       ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     UPDATE ${table} t SET claimed_at = $3 FROM picked
     WHERE t.organization = picked.organization AND t.environment = picked.environment AND t.id = picked.id
     RETURNING t.organization, t.environment, t.id, t.customer_id, t.credits, t.credits_state, t.spend_key,
       t.received_at, t.occurred_at`,
    [new Date(now - CLAIM_LEASE_MS), CLAIM_LIMIT, new Date(now)],
  );
  // In the order they arrived, and happened: the order in which events alone are spent.
  const at = (date: Date) => new Date(date).getTime();
  return rows.sort(
    (a, b) =>
      at(a.received_at) - at(b.received_at) || at(a.occurred_at) - at(b.occurred_at) || a.id.localeCompare(b.id),
  );
}

type SpendGroup = { tenant: Tenant; customerId: string; key: string | null; events: ClaimedEvent[]; single: boolean };

/**
 * A customer's pending events make one group; events a cut-off pass left keep the key they had
 * (`spending`: their group's; `single`: each its own), so no event is ever spent under two keys.
 */
export function groupsOf(events: ClaimedEvent[]): SpendGroup[] {
  const groups = new Map<string, SpendGroup>();
  for (const event of events) {
    const tenant = { organization: event.organization, environment: event.environment };
    const single = event.credits_state === 'single';
    const key = event.credits_state === 'pending' ? null : event.spend_key;
    const id = `${event.organization}\u0000${event.environment}\u0000${event.customer_id}\u0000${single ? event.id : (key ?? '')}`;
    const group = groups.get(id) ?? { tenant, customerId: event.customer_id, key, events: [], single };
    group.events.push(event);
    groups.set(id, group);
  }
  return [...groups.values()];
}

/** Spends the group; answers its events if spent together (to be marked at once), none if spent alone. */
async function spendGroup(context: ServiceContext, payer: Payer, group: SpendGroup): Promise<ClaimedEvent[]> {
  if (group.single) {
    await spendAlone(context, payer, group.events);
    return [];
  }
  const amount = group.events.reduce((sum, event) => sum + Number(event.credits), 0);
  try {
    if (amount > CREDIT_LIMITS.maxAmount) throw new TooMuchForOneSpend();
    if (amount > 0) await payer.spend(group.key!, amount, group.events.length);
    return group.events;
  } catch (error) {
    if (!(error instanceof TooMuchForOneSpend) && !isInsufficient(error)) throw error;
    await setState(context, group.events, 'single', (event) => singleSpendKey(event.id));
    await spendAlone(context, payer, group.events);
    return [];
  }
}

class TooMuchForOneSpend extends Error {}

/**
 * Each event alone, in order, while the balance (with the overdraft limit) pays it; one it does
 * not pay is `unpaid`, left to a metered price. The balance a refusal told is counted down, so
 * events it cannot pay are not tried.
 */
async function spendAlone(context: ServiceContext, payer: Payer, events: ClaimedEvent[]) {
  let room = Number.POSITIVE_INFINITY;
  for (const event of events) {
    const credits = Number(event.credits);
    let state: CreditsState = 'spent';
    if (credits > CREDIT_LIMITS.maxAmount || credits > room) state = 'unpaid';
    else if (credits > 0) {
      try {
        await payer.spend(singleSpendKey(event.id), credits, 1);
        room -= credits;
      } catch (error) {
        if (!isInsufficient(error)) throw error;
        state = 'unpaid';
        room = balanceTold(error) + payer.overdraftLimit;
      }
    }
    await setState(context, [event], state);
  }
}

type Payer = { overdraftLimit: number; spend: (key: string, amount: number, events: number) => Promise<void> };

const payerKey = (group: Pick<SpendGroup, 'tenant' | 'customerId'>) =>
  `${group.tenant.organization}\u0000${group.tenant.environment}\u0000${group.customerId}`;

/**
 * Who pays each group: its customer at its time (a test clock's, or now), with its environment's
 * ledger settings; read once a pass for each organization and environment.
 */
async function payersOf(context: ServiceContext, groups: SpendGroup[]): Promise<Map<string, Payer>> {
  const { store } = context;
  const spending = { store, customerTimes: (tenant: Tenant, ids: string[]) => timesOfCustomers(context, tenant, ids) };
  const payers = new Map<string, Payer>();
  const byTenant = new Map<string, SpendGroup[]>();
  for (const group of groups) {
    const tenantKey = `${group.tenant.organization}\u0000${group.tenant.environment}`;
    byTenant.set(tenantKey, [...(byTenant.get(tenantKey) ?? []), group]);
  }
  for (const tenantGroups of byTenant.values()) {
    const { tenant } = tenantGroups[0]!;
    const customers = [...new Set(tenantGroups.map((group) => group.customerId))];
    const [times, settings] = await Promise.all([
      timesOfCustomers(context, tenant, customers),
      ledgerSettingsOf(store, tenant),
    ]);
    for (const customerId of customers) {
      const now = times.get(customerId) ?? context.now();
      payers.set(payerKey({ tenant, customerId }), {
        overdraftLimit: settings.overdraftLimit ?? 0,
        spend: async (key, amount, events) => {
          const metadata = { source: 'usage_events', events: String(events) };
          const request = { amount, idempotencyKey: key, metadata };
          await spendCredits(spending, { tenant, customerId, request, terms: { now, settings } });
        },
      });
    }
  }
  return payers;
}

const isInsufficient = (error: unknown) => error instanceof ApiError && error.code === 'insufficient_credits';

/** The balance an `insufficient_credits` refusal told (details[0].balance). */
const balanceTold = (error: unknown) =>
  ((error as ApiError).details?.[0] as { balance?: number } | undefined)?.balance ?? 0;

/** Sets the events' state (and, with `keyOf`, their spend keys) in one statement. */
async function setState(
  context: ServiceContext,
  events: ClaimedEvent[],
  state: CreditsState,
  keyOf?: (event: ClaimedEvent) => string,
): Promise<void> {
  if (events.length === 0) return;
  const { database, tables } = context.store;
  const keys = events.map((event) => (keyOf ? keyOf(event) : null));
  await database.query(
    `UPDATE ${usageEventsTable(tables.schema)} t SET credits_state = $1, spend_key = COALESCE(k.key, t.spend_key)
     FROM unnest($2::text[], $3::text[], $4::text[], $5::text[]) AS k(organization, environment, id, key)
     WHERE t.organization = k.organization AND t.environment = k.environment AND t.id = k.id`,
    [
      state,
      events.map((event) => event.organization),
      events.map((event) => event.environment),
      events.map((event) => event.id),
      keys,
    ],
  );
  events.forEach((event, i) => {
    event.credits_state = state;
    event.spend_key = keys[i] ?? event.spend_key;
  });
}

/**
 * The worker: `nudge` runs a pass now (or right after the one running), a timer runs one every
 * USAGE_SPEND_INTERVAL_MS, and a full claim runs the next pass at once. `stop` waits for the
 * pass running.
 */
export function usageCreditSpender(context: ServiceContext): { nudge: () => void; stop: () => Promise<void> } {
  const passes = nudgedPasses(
    async () => (await spendUsageCredits(context)) >= CLAIM_LIMIT,
    (err) => context.logger.error({ err }, 'spending usage credits failed; the next pass tries again'),
  );
  const timer = setInterval(passes.nudge, USAGE_SPEND_INTERVAL_MS);
  timer.unref();
  const stop = async () => {
    clearInterval(timer);
    await passes.drain();
  };
  return { nudge: passes.nudge, stop };
}
