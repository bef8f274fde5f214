import type {
  CreditLedgerEntry,
  CreditSource,
  CreditsAdjustedData,
  CreditsExpiredData,
  CreditsGrantedData,
  CreditsLowBalanceData,
  CreditsSpentData,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

// A customer's credits (docs/credits.md): grants, spends, take-backs and expiries on the stream
// `customer_credits-<customer id>`. Not the customer balance of customers/balance.ts, which is money.

export const creditsStream = (customerId: string) => `customer_credits-${customerId}`;

export type CreditsGranted = { type: 'CreditsGranted'; data: CreditsGrantedData };
export type CreditsSpent = { type: 'CreditsSpent'; data: CreditsSpentData };
export type CreditsAdjusted = { type: 'CreditsAdjusted'; data: CreditsAdjustedData };
export type CreditsExpired = { type: 'CreditsExpired'; data: CreditsExpiredData };
/** Not a change of the balance: a notice that a change took it below the threshold. */
export type CreditsLowBalance = { type: 'CreditsLowBalance'; data: CreditsLowBalanceData };
/** The events that change the balance, one ledger entry each. */
export type CreditsLedgerEvent = CreditsGranted | CreditsSpent | CreditsAdjusted | CreditsExpired;
export type CreditsEvent = CreditsLedgerEvent | CreditsLowBalance;

export const creditsEvents = streamEvents<CreditsEvent>({
  CreditsGranted: true,
  CreditsSpent: true,
  CreditsAdjusted: true,
  CreditsExpired: true,
  CreditsLowBalance: true,
});

/** A grant with credits left, not yet recorded as expired (it may be past its `expires_at`). */
export type OpenGrant = {
  id: string;
  remaining: number;
  source: CreditSource;
  priority: number;
  expires_at: string | null;
  granted_at: string;
};

/** What a repeat of a spend's idempotency key answers. */
export type SpendRecord = Pick<CreditsSpentData, 'spend_id' | 'amount' | 'metadata' | 'balance_after' | 'spent_at'>;

export type CreditsState = {
  /** Open grants in the order they were granted. */
  grants: OpenGrant[];
  /** Remaining credits of the open grants, expired or not. */
  balance: number;
  /**
   * The latest `RECENT_SPEND_KEYS` spends by key, oldest first in `spendOrder`: a concurrent repeat
   * of a key is answered from here on its retry. Every key is kept in `credit_spend_keys`, which
   * a spend reads before it decides (docs/credits.md, Idempotency); the state stays bounded.
   */
  spends: Record<string, SpendRecord>;
  spendOrder: string[];
  grantKeys: Record<string, string>;
};

/** How many spends' keys the state keeps (and so its snapshots). */
export const RECENT_SPEND_KEYS = 16;

/**
 * Version of `evolve` and the state's shape for snapshots (docs/decisions/0010-snapshots.md).
 * 2: spends' keys are a bounded window; snapshots of 1 (every key) are read no more, so such a
 * stream is folded once from its start and snapshotted again.
 */
export const CREDITS_SNAPSHOT_VERSION = 2;

/**
 * A snapshot every 20 events: the state is small (open grants and a few keys), so a command
 * reads at most about 20 events on top of it instead of about 100 with ledger entries each.
 */
export const CREDITS_SNAPSHOT_EVERY = 20;

export const initialState = (): CreditsState => ({
  grants: [],
  balance: 0,
  spends: {},
  spendOrder: [],
  grantKeys: {},
});

export function evolve(state: CreditsState, event: CreditsEvent): CreditsState {
  switch (event.type) {
    case 'CreditsGranted': {
      const { data } = event;
      const grant: OpenGrant = {
        id: data.grant_id,
        remaining: data.amount - debtSettledBy(data),
        source: data.source,
        priority: data.priority,
        expires_at: data.expires_at,
        granted_at: data.granted_at,
      };
      const grantKeys = data.idempotency_key
        ? { ...state.grantKeys, [data.idempotency_key]: data.grant_id }
        : state.grantKeys;
      const grants = grant.remaining > 0 ? [...state.grants, grant] : state.grants;
      return { ...state, grants, balance: data.balance_after, grantKeys };
    }
    case 'CreditsSpent': {
      const { drawn_from, idempotency_key, spend_id, amount, metadata, balance_after, spent_at } = event.data;
      const record = { spend_id, amount, metadata, balance_after, spent_at };
      return {
        ...state,
        grants: drawDown(state.grants, drawn_from),
        balance: balance_after,
        ...remember(state, idempotency_key, record),
      };
    }
    case 'CreditsAdjusted':
      return { ...state, grants: drawDown(state.grants, event.data.drawn_from), balance: event.data.balance_after };
    case 'CreditsExpired':
      return {
        ...state,
        grants: state.grants.filter((grant) => grant.id !== event.data.grant_id),
        balance: event.data.balance_after,
      };
    case 'CreditsLowBalance':
      return state;
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}

/** The spends' window with `key` added last, the oldest left out past RECENT_SPEND_KEYS. */
function remember(state: CreditsState, key: string, record: SpendRecord) {
  const order = [...(state.spendOrder ?? Object.keys(state.spends)).filter((k) => k !== key), key];
  const kept = order.slice(-RECENT_SPEND_KEYS);
  const spends: Record<string, SpendRecord> = {};
  for (const k of kept) spends[k] = k === key ? record : state.spends[k]!;
  return { spends, spendOrder: kept };
}

/** The grants after `draws`; a grant drawn to zero closes. */
function drawDown(grants: OpenGrant[], draws: { grant_id: string; amount: number }[]): OpenGrant[] {
  const drawn = new Map(draws.map((draw) => [draw.grant_id, draw.amount]));
  return grants
    .map((grant) => ({ ...grant, remaining: grant.remaining - (drawn.get(grant.id) ?? 0) }))
    .filter((grant) => grant.remaining > 0);
}

/**
 * What a grant repays of a debt (a balance below zero after an overdraft) before it holds
 * anything: the debt first, up to its amount. The balance before the grant is its
 * `balance_after` less its amount, so stored grants need no field for it.
 *
 *     balance -30, grant 100 -> settles 30, 70 left on the grant, balance 70
 *     balance -30, grant 20  -> settles 20, nothing left on it,  balance -10
 *     balance 5,   grant 100 -> settles 0, 100 left on it,       balance 105
 */
export const debtSettledBy = ({ amount, balance_after }: Pick<CreditsGrantedData, 'amount' | 'balance_after'>) =>
  Math.min(amount, Math.max(0, amount - balance_after));

/** Expired at `now`: its `expires_at` is at or before it. */
export const isExpired = (grant: Pick<OpenGrant, 'expires_at'>, now: Date) =>
  grant.expires_at !== null && Date.parse(grant.expires_at) <= now.getTime();

/**
 * The burn order: soonest expiry first (never-expiring last), then higher priority, then the
 * older grant. `grants` are in grant order, and the sort is stable, which makes "older" hold.
 */
export function inBurnOrder<T extends Pick<OpenGrant, 'expires_at' | 'priority'>>(grants: readonly T[]): T[] {
  const expiry = (grant: T) => (grant.expires_at === null ? Infinity : Date.parse(grant.expires_at));
  return [...grants].sort((a, b) => expiry(a) - expiry(b) || b.priority - a.priority);
}

/** `amount` drawn from `grants` in burn order; the caller has checked that they hold enough. */
export function drawsFor(grants: readonly OpenGrant[], amount: number): { grant_id: string; amount: number }[] {
  const draws: { grant_id: string; amount: number }[] = [];
  let left = amount;
  for (const grant of inBurnOrder(grants)) {
    if (left === 0) break;
    const take = Math.min(grant.remaining, left);
    draws.push({ grant_id: grant.id, amount: take });
    left -= take;
  }
  return draws;
}

/** The ledger's view of an event: its entry id, type, signed amount, the grant it names and its time. */
export function ledgerEntryOf(event: CreditsLedgerEvent) {
  switch (event.type) {
    case 'CreditsGranted': {
      const { grant_id, amount, granted_at } = event.data;
      return { id: grant_id, type: 'grant' as const, amount, grant_id, at: granted_at };
    }
    case 'CreditsSpent': {
      const { spend_id, amount, spent_at } = event.data;
      return { id: spend_id, type: 'spend' as const, amount: -amount, grant_id: null, at: spent_at };
    }
    case 'CreditsAdjusted': {
      const { adjustment_id, amount, adjusted_at } = event.data;
      return { id: adjustment_id, type: 'adjustment' as const, amount: -amount, grant_id: null, at: adjusted_at };
    }
    case 'CreditsExpired': {
      const { grant_id, amount, expired_at } = event.data;
      return { id: expiryEntryId(grant_id), type: 'expiry' as const, amount: -amount, grant_id, at: expired_at };
    }
  }
}

/** A grant expires once, so its expiry's entry is named after it. */
export const expiryEntryId = (grantId: string) => `cexp_${grantId.replace(/^cgr_/, '')}`;

/** The `credit_ledger_entry` of an event, as `GET /v1/customers/{id}/credits/ledger` shows it. */
export function ledgerEntryResource(event: CreditsLedgerEvent, livemode: boolean): CreditLedgerEntry {
  const entry = ledgerEntryOf(event);
  const { data } = event;
  return {
    object: 'credit_ledger_entry',
    id: entry.id,
    type: entry.type,
    amount: entry.amount,
    balance_after: data.balance_after,
    grant_id: entry.grant_id,
    drawn_from: 'drawn_from' in data ? data.drawn_from : [],
    reason: 'reason' in data ? data.reason : null,
    metadata: 'metadata' in data ? data.metadata : null,
    created_at: entry.at,
    livemode,
  };
}
