import { type CreditSource, expiryNotLater, insufficientCredits, spendKeyMismatch } from '@billing/contracts';
import {
  type CreditsEvent,
  type CreditsExpired,
  type CreditsLedgerEvent,
  type CreditsLowBalance,
  type CreditsState,
  drawsFor,
  evolve,
  isExpired,
  ledgerEntryResource,
  type SpendRecord,
} from './ledger';

/** What every command carries about its organization and environment. */
export type LedgerSettings = {
  livemode: boolean;
  /** `credits_low_balance_threshold` of the billing settings; null: no low-balance events. */
  lowBalanceThreshold: number | null;
  /** `credits_overdraft_limit` of the billing settings: spends may go down to minus it; absent: 0. */
  overdraftLimit?: number;
};

type On = { customerId: string; now: Date } & LedgerSettings;

/** `idempotencyKey` makes the grant once (a purchase's order); null for manual grants. */
export type GrantCredits = {
  type: 'GrantCredits';
  data: On & {
    grantId: string;
    amount: number;
    source: CreditSource;
    sourceId: string | null;
    reason: string | null;
    priority: number;
    expiresAt: Date | null;
    idempotencyKey: string | null;
  };
};

/**
 * `earlier`: the spend already made with this key, as `credit_spend_keys` holds it (the state
 * keeps only the latest keys); absent or null when the caller found none.
 */
export type SpendCredits = {
  type: 'SpendCredits';
  data: On & {
    spendId: string;
    amount: number;
    idempotencyKey: string;
    metadata: Record<string, string> | null;
    earlier?: SpendRecord | null;
  };
};

/**
 * The merchant takes credits back. With `fromGrantKey`, only from the grant made with that key,
 * and only what it has left of `amount` (a refund's take-back from its order's grant): nothing
 * when it has none left, never from another grant.
 */
export type AdjustCredits = {
  type: 'AdjustCredits';
  data: On & { adjustmentId: string; amount: number; reason: string; fromGrantKey?: string };
};

/** Records the expiry of every grant whose `expires_at` is at or before `now`. */
export type ExpireCredits = { type: 'ExpireCredits'; data: On };

/**
 * The grant made with `idempotencyKey` ends at `now`, before its `expires_at`: what is left of it
 * expires (a plan switch into a new period ends the old period's allowance). Nothing when no
 * such grant is open.
 */
export type EndGrant = { type: 'EndGrant'; data: On & { idempotencyKey: string } };

export type CreditsCommand = GrantCredits | SpendCredits | AdjustCredits | ExpireCredits | EndGrant;

/**
 * Every command first expires the grants that are due at its `now`, in the same append, so a
 * spend never draws from a grant past its `expires_at` even when no sweep has expired it yet.
 * Each event carries its ledger entry and the balance after it for merchants (`credits.*`),
 * and a CreditsLowBalance closes an append that crossed the threshold.
 */
export function decide(command: CreditsCommand, state: CreditsState): CreditsEvent[] {
  const events = changes(command, state).map((event) => published(event, command.data.livemode));
  return [...events, ...lowBalance(state.balance, events, command.data)];
}

function changes(command: CreditsCommand, state: CreditsState): CreditsLedgerEvent[] {
  switch (command.type) {
    case 'GrantCredits':
      return grant(command, state);
    case 'SpendCredits':
      return spend(command, state);
    case 'AdjustCredits':
      return adjust(command, state);
    case 'ExpireCredits':
      return expiriesDue(state, command.data);
    case 'EndGrant':
      return endGrant(command, state);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

function grant({ data }: GrantCredits, state: CreditsState): CreditsLedgerEvent[] {
  if (data.idempotencyKey !== null && state.grantKeys[data.idempotencyKey]) return [];
  if (data.expiresAt && data.expiresAt.getTime() <= data.now.getTime()) throw expiryNotLater(data.now);
  const expiries = expiriesDue(state, data);
  const balance = after(state, expiries).balance + data.amount;
  return [
    ...expiries,
    {
      type: 'CreditsGranted',
      data: {
        customer_id: data.customerId,
        grant_id: data.grantId,
        amount: data.amount,
        source: data.source,
        source_id: data.sourceId,
        reason: data.reason,
        priority: data.priority,
        expires_at: data.expiresAt?.toISOString() ?? null,
        idempotency_key: data.idempotencyKey,
        balance_after: balance,
        granted_at: data.now.toISOString(),
      },
    },
  ];
}

/**
 * A repeated key answers the spend it made (nothing new); with another amount or metadata it is
 * refused. A spend may take the balance down to minus the overdraft limit (0: not below zero).
 */
function spend({ data }: SpendCredits, state: CreditsState): CreditsLedgerEvent[] {
  const earlier = data.earlier ?? state.spends[data.idempotencyKey];
  if (earlier) {
    const same = earlier.amount === data.amount && sameMetadata(earlier.metadata, data.metadata);
    if (!same) throw spendKeyMismatch();
    return [];
  }
  const expiries = expiriesDue(state, data);
  const current = after(state, expiries);
  const overdraft = data.overdraftLimit ?? 0;
  if (data.amount > current.balance + overdraft) throw insufficientCredits(current.balance, data.amount, overdraft);
  return [
    ...expiries,
    {
      type: 'CreditsSpent',
      data: {
        customer_id: data.customerId,
        spend_id: data.spendId,
        amount: data.amount,
        // What the grants hold is drawn; the rest, in an overdraft, is a debt that grants repay.
        drawn_from: drawsFor(current.grants, Math.min(data.amount, Math.max(0, current.balance))),
        idempotency_key: data.idempotencyKey,
        metadata: data.metadata,
        balance_after: current.balance - data.amount,
        spent_at: data.now.toISOString(),
      },
    },
  ];
}

/** Taken back as a spend is drawn; never below zero, whatever the overdraft limit. */
function adjust({ data }: AdjustCredits, state: CreditsState): CreditsLedgerEvent[] {
  const expiries = expiriesDue(state, data);
  const current = after(state, expiries);
  if (data.fromGrantKey !== undefined) return [...expiries, ...fromOneGrant(data, current, data.fromGrantKey)];
  if (data.amount > Math.max(0, current.balance)) throw insufficientCredits(current.balance, data.amount);
  return [...expiries, adjusted(data, current, drawsFor(current.grants, data.amount))];
}

/** What the grant made with `key` has left of the amount, taken back from it alone. */
function fromOneGrant(data: AdjustCredits['data'], current: CreditsState, key: string): CreditsLedgerEvent[] {
  const grant = current.grants.find((open) => open.id === current.grantKeys[key]);
  const amount = Math.min(data.amount, grant?.remaining ?? 0, Math.max(0, current.balance));
  if (!grant || amount <= 0) return [];
  return [adjusted({ ...data, amount }, current, [{ grant_id: grant.id, amount }])];
}

function adjusted(
  data: AdjustCredits['data'],
  current: CreditsState,
  drawn: { grant_id: string; amount: number }[],
): CreditsLedgerEvent {
  return {
    type: 'CreditsAdjusted',
    data: {
      customer_id: data.customerId,
      adjustment_id: data.adjustmentId,
      amount: data.amount,
      drawn_from: drawn,
      reason: data.reason,
      balance_after: current.balance - data.amount,
      adjusted_at: data.now.toISOString(),
    },
  };
}

function endGrant({ data }: EndGrant, state: CreditsState): CreditsLedgerEvent[] {
  const expiries = expiriesDue(state, data);
  const current = after(state, expiries);
  const open = current.grants.find((grant) => grant.id === state.grantKeys[data.idempotencyKey]);
  if (!open || open.remaining <= 0) return expiries;
  const ended: CreditsExpired = {
    type: 'CreditsExpired',
    data: {
      customer_id: data.customerId,
      grant_id: open.id,
      amount: open.remaining,
      balance_after: current.balance - open.remaining,
      expired_at: data.now.toISOString(),
    },
  };
  return [...expiries, ended];
}

/** One CreditsExpired per open grant due at `now`, in grant order, each with the balance after it. */
function expiriesDue(state: CreditsState, { customerId, now }: On): CreditsExpired[] {
  let balance = state.balance;
  return state.grants
    .filter((open) => isExpired(open, now))
    .map((open) => {
      balance -= open.remaining;
      return {
        type: 'CreditsExpired',
        data: {
          customer_id: customerId,
          grant_id: open.id,
          amount: open.remaining,
          balance_after: balance,
          expired_at: open.expires_at!,
        },
      };
    });
}

const after = (state: CreditsState, events: CreditsLedgerEvent[]) => events.reduce(evolve, state);

/** The event with what merchants read of it: its ledger entry and the balance after it. */
function published<E extends CreditsLedgerEvent>(event: E, livemode: boolean): E {
  const object = ledgerEntryResource(event, livemode);
  return { ...event, data: { ...event.data, object, balance: event.data.balance_after } };
}

/**
 * Once per crossing: the append takes the balance from at or above the threshold to below it.
 * A balance already below stays quiet until a grant lifts it back to the threshold or above.
 * The entry named is the append's last, whose balance is the one reported.
 */
function lowBalance(before: number, events: CreditsLedgerEvent[], on: On): CreditsLowBalance[] {
  const threshold = on.lowBalanceThreshold;
  const last = events.at(-1);
  if (threshold === null || !last || before < threshold) return [];
  const balance = last.data.balance_after;
  if (balance >= threshold) return [];
  const object = ledgerEntryResource(last, on.livemode);
  return [{ type: 'CreditsLowBalance', data: { customer_id: on.customerId, balance, threshold, object } }];
}

function sameMetadata(a: Record<string, string> | null, b: Record<string, string> | null): boolean {
  const entries = (m: Record<string, string> | null) => JSON.stringify(Object.entries(m ?? {}).sort());
  return entries(a) === entries(b);
}
