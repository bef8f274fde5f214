import { ApiError, CREDIT_LIMITS, RESERVED_SPEND_KEY_PREFIX } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { ledgerSettingsOf } from '../../credits/ledger-settings';
import { spendCredits } from '../../credits/spend';
import { timesOfCustomers } from './intake';
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

/** One pass: claims the events to spend and spends them. Answers how many it claimed. */
export async function spendUsageCredits(context: ServiceContext): Promise<number> {
  const claimed = await claimEvents(context);
  for (const group of groupsOf(claimed)) await spendGroup(context, group);
  return claimed.length;
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

async function spendGroup(context: ServiceContext, group: SpendGroup): Promise<void> {
  const payer = await payerOf(context, group);
  if (group.single) {
    await spendAlone(context, payer, group, group.events);
    return;
  }
  const key = group.key ?? groupSpendKey(group.events[0]!.id);
  if (!group.key) await setState(context, group, group.events, 'spending', () => key);
  const amount = group.events.reduce((sum, event) => sum + Number(event.credits), 0);
  if (amount > CREDIT_LIMITS.maxAmount) {
    await spendAlone(context, payer, group, await toSingles(context, group));
    return;
  }
  try {
    if (amount > 0) await payer.spend(key, amount, group.events.length);
    await setState(context, group, group.events, 'spent');
  } catch (error) {
    if (!isInsufficient(error)) throw error;
    await spendAlone(context, payer, group, await toSingles(context, group));
  }
}

/** The group's events, each to be spent under its own key from now on. */
async function toSingles(context: ServiceContext, group: SpendGroup): Promise<ClaimedEvent[]> {
  await setState(context, group, group.events, 'single', singleSpendKey);
  return group.events;
}

/**
 * Each event alone, in order, while the balance (with the overdraft limit) pays it; one it does
 * not pay is `unpaid`, left to a metered price. The balance a refusal told is counted down, so
 * events it cannot pay are not tried.
 */
async function spendAlone(context: ServiceContext, payer: Payer, group: SpendGroup, events: ClaimedEvent[]) {
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
    await setState(context, group, [event], state);
  }
}

type Payer = { overdraftLimit: number; spend: (key: string, amount: number, events: number) => Promise<void> };

/** Spends from the group's customer at its time (a test clock's, or now), with its environment's ledger settings. */
async function payerOf(context: ServiceContext, group: SpendGroup): Promise<Payer> {
  const { store } = context;
  const [times, settings] = await Promise.all([
    timesOfCustomers(context, group.tenant, [group.customerId]),
    ledgerSettingsOf(store, group.tenant),
  ]);
  const now = times.get(group.customerId) ?? context.now();
  return {
    overdraftLimit: settings.overdraftLimit ?? 0,
    spend: async (key, amount, events) => {
      const metadata = { source: 'usage_events', events: String(events) };
      const request = { amount, idempotencyKey: key, metadata };
      await spendCredits(store, group.tenant, group.customerId, now, request, settings);
    },
  };
}

const isInsufficient = (error: unknown) => error instanceof ApiError && error.code === 'insufficient_credits';

/** The balance an `insufficient_credits` refusal told (details[0].balance). */
const balanceTold = (error: unknown) =>
  ((error as ApiError).details?.[0] as { balance?: number } | undefined)?.balance ?? 0;

async function setState(
  context: ServiceContext,
  group: SpendGroup,
  events: ClaimedEvent[],
  state: CreditsState,
  keyOf?: (id: string) => string,
): Promise<void> {
  const { database, tables } = context.store;
  const ids = events.map((e) => e.id);
  const keys = keyOf ? ids.map(keyOf) : null;
  await database.query(
    `UPDATE ${usageEventsTable(tables.schema)} t SET credits_state = $3,
       spend_key = CASE WHEN $5::boolean THEN k.key ELSE t.spend_key END
     FROM unnest($4::text[], $6::text[]) AS k(id, key)
     WHERE t.organization = $1 AND t.environment = $2 AND t.id = k.id`,
    [group.tenant.organization, group.tenant.environment, state, ids, keys !== null, keys ?? ids],
  );
  for (const event of events) {
    event.credits_state = state;
    if (keys) event.spend_key = keyOf!(event.id);
  }
}

/**
 * The worker: `nudge` runs a pass now (or again right after the one running), a timer runs one
 * every USAGE_SPEND_INTERVAL_MS; a full claim runs the next pass at once. `stop` waits for the
 * pass running.
 */
export function usageCreditSpender(context: ServiceContext): { nudge: () => void; stop: () => Promise<void> } {
  let running: Promise<void> | null = null;
  let again = false;
  let stopped = false;
  const nudge = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = spendUsageCredits(context)
      .then((claimed) => {
        if (claimed >= CLAIM_LIMIT) again = true;
      })
      .catch((err) => context.logger.error({ err }, 'spending usage credits failed; the next pass tries again'))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          nudge();
        }
      });
  };
  const timer = setInterval(nudge, USAGE_SPEND_INTERVAL_MS);
  timer.unref();
  const stop = async () => {
    stopped = true;
    clearInterval(timer);
    while (running) await running;
  };
  return { nudge, stop };
}
