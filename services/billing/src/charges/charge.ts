import {
  type ChargeSavedCardBody,
  type ChargeStatus,
  type ChargeStatusBody,
  type SavedCardCharge,
  type SavedCardCharges,
  type SavedPaymentMethod,
  ApiError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { customersTable } from '../customers/read-model';
import { checkoutClient } from '../dependencies';
import { type ChargePurpose, forgetPendingCharges, notePendingCharges } from './pending';

// Billing's one way to charge a saved card: through checkout, which owns the processor
// (docs/lost-answers.md). Every charge is noted as pending before it is asked, under its
// processor idempotency key; an answer that is lost is never read as "not charged".

/**
 * What asking for a charge came to: the processor's answer, or `unknown` when the answer was
 * lost (a timeout, a reset connection, a 5xx) and the status query could not tell either. The
 * charge then stays pending under its key until the reconciler learns its outcome.
 */
export type ChargeOutcome = SavedCardCharge | { status: 'unknown' };

export type SavedCardChargeAsk = {
  card: SavedPaymentMethod;
  amount: number;
  /** The processor idempotency key: `<invoice>:<attempt>`. */
  key: string;
  /** Where a late outcome is recorded; null for a charge whose own record is its pending mark (a switch's hold). */
  pending: { purpose: ChargePurpose; subject: string; attempt: number; detail?: unknown } | null;
};

const asBilling = (tenant: Tenant) => ({ ...tenant, keyKind: 'secret' as const, keyId: 'billing' });

function checkoutOf(context: ServiceContext) {
  const checkout = checkoutClient(context);
  if (!checkout) throw new ApiError(503, 'service_unavailable', 'checkout is not configured; charges wait');
  return checkout;
}

/** The 409 a request gets while a charge it would repeat has no known outcome. */
export function paymentPending(message: string, details?: unknown[]): ApiError {
  return new ApiError(409, 'payment_pending', message, details);
}

/**
 * Charges a saved card once under `ask.key`. A 4xx from checkout (a refusal in Production, a
 * malformed request) is thrown: nothing was charged. Anything else without an answer is asked
 * again as a status query; still nothing known: `unknown`, and the pending mark stays.
 */
export async function chargeSavedCard(context: ServiceContext, tenant: Tenant, ask: SavedCardChargeAsk) {
  const outcomes = await chargeSavedCards(context, tenant, [ask]);
  return outcomes[0]!;
}

/** `chargeSavedCard` for up to 100 charges of one tenant in one call (a batch of renewals); answers in order. */
export async function chargeSavedCards(
  context: ServiceContext,
  tenant: Tenant,
  asks: SavedCardChargeAsk[],
): Promise<ChargeOutcome[]> {
  const checkout = checkoutOf(context);
  const { database, tables } = context.store;
  await notePendingCharges(database, tables.schema, pendingOf(tenant, asks));
  const charges: ChargeSavedCardBody[] = asks.map((ask) => ({
    payment_method_id: ask.card.id,
    amount: ask.amount,
    idempotency_key: ask.key,
  }));
  let answered: SavedCardCharge[];
  try {
    answered =
      charges.length === 1
        ? [await postCharge(checkout, '/internal/charges', charges[0]!, tenant)]
        : (await postCharge<SavedCardCharges>(checkout, '/internal/charges/batch', { charges }, tenant)).results;
  } catch (error) {
    if (error instanceof RefusedCharge) {
      await forgetPendingCharges(database, tables.schema, pendingKeys(asks));
      throw error.refusal;
    }
    context.logger.warn({ count: asks.length }, 'a charge got no answer; asking its status');
    const known = await Promise.all(asks.map((ask) => chargeStatus(context, tenant, ask.key, { release: false })));
    // Not found yet may be a charge still under way: not known.
    return known.map((outcome) => (outcome.status === 'not_found' ? { status: 'unknown' } : outcome));
  }
  if (answered.length !== asks.length)
    throw new Error(`checkout answered ${answered.length} of ${asks.length} charges`);
  return answered;
}

/** Thrown for a 4xx: checkout refused before anything was charged. */
class RefusedCharge extends Error {
  constructor(readonly refusal: ApiError) {
    super(refusal.message);
  }
}

async function postCharge<T = SavedCardCharge>(
  checkout: ReturnType<typeof checkoutOf>,
  path: string,
  body: unknown,
  tenant: Tenant,
): Promise<T> {
  const { status, body: answer } = await checkout.post<T>(path, body, asBilling(tenant));
  if (status === 200) return answer;
  const envelope = answer as { error?: { code?: string; message?: string } } | undefined;
  const code = envelope?.error?.code ?? 'service_unavailable';
  throw new RefusedCharge(
    new ApiError(status, code, envelope?.error?.message ?? `checkout answered ${status} to a charge`),
  );
}

/**
 * The status query by key (`POST /internal/charges/status`): the answer kept under it, or
 * `not_found` (never asked, or still under way). With `release`, a key never answered is given
 * up at the processor, so the answer is final. No answer to the query itself: `unknown`.
 */
export async function chargeStatus(
  context: ServiceContext,
  tenant: Tenant,
  key: string,
  options: { release: boolean },
): Promise<ChargeOutcome | { status: 'not_found' }> {
  const body: ChargeStatusBody = { idempotency_key: key, release_if_absent: options.release };
  try {
    const { status, body: answer } = await checkoutOf(context).post<ChargeStatus>(
      '/internal/charges/status',
      body,
      asBilling(tenant),
    );
    return status === 200 ? answer : { status: 'unknown' };
  } catch {
    return { status: 'unknown' };
  }
}

/** Marks recorded charges as no longer pending (after their outcome is in the invoice or subscription). */
export async function chargesRecorded(context: ServiceContext, keys: string[]): Promise<void> {
  await forgetPendingCharges(context.store.database, context.store.tables.schema, keys);
}

/** The customer's saved card (the default payment method), or null. */
export async function savedCardOf(context: ServiceContext, customerId: string): Promise<SavedPaymentMethod | null> {
  const { rows } = await context.store.database.query<{ payment_method: SavedPaymentMethod | null }>(
    `SELECT payment_method FROM ${customersTable(context.store.tables.schema)} WHERE id = $1`,
    [customerId],
  );
  return rows[0]?.payment_method ?? null;
}

function pendingOf(tenant: Tenant, asks: SavedCardChargeAsk[]) {
  return asks.flatMap((ask) => (ask.pending ? [{ key: ask.key, ...tenant, ...ask.pending, amount: ask.amount }] : []));
}

const pendingKeys = (asks: SavedCardChargeAsk[]) => asks.filter((ask) => ask.pending).map((ask) => ask.key);
