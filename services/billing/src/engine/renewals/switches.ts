import type { EventStore, EventStoreTransaction, SqlExecutor } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import type { OpenInvoice } from '../../invoices/invoice';
import { subscriptionsTable } from '../../subscriptions/read-model';
import { balancesTable, takeBalanceForInvoice } from '../../customers/balance';
import { settleHeldSwitch } from '../switching/settle';
import { switchesTable } from '../../subscriptions/switch-read-model';

// What renewals ask of plan switching (renew.ts and batch.ts), in the transaction that
// opens a renewal invoice.

/**
 * Locks the subscription's row (a switch locks it to start) and answers whether a switch holds
 * it (an immediate switch is charging) or moved it meanwhile (its period is no longer the one
 * the renewal read): then the renewal must not open the invoice of that period.
 */
export async function heldBySwitch(
  tx: SqlExecutor,
  schema: string,
  subscription: { id: string; current_period_end: string },
): Promise<boolean> {
  const { rows } = await tx.query<{ period_end: string }>(
    `SELECT document->>'current_period_end' AS period_end FROM ${subscriptionsTable(schema)} WHERE id = $1 FOR UPDATE`,
    [subscription.id],
  );
  if (rows[0] && Date.parse(rows[0].period_end) !== Date.parse(subscription.current_period_end)) return true;
  const held = await tx.query(`SELECT 1 FROM ${switchesTable(schema)} WHERE subscription_id = $1`, [subscription.id]);
  return held.rows.length > 0;
}

/**
 * Locks the rows of many subscriptions (in id order) and answers whether any of them is held or
 * was moved by a switch, or its customer has a balance: then the batch leaves them to `renewDue`.
 */
export async function offThePlainPath(
  tx: SqlExecutor,
  schema: string,
  subscriptions: Array<{ id: string; customer_id: string; current_period_end: string }>,
): Promise<boolean> {
  const ids = subscriptions.map((s) => s.id).sort();
  const locked = await tx.query<{ id: string; period_end: string }>(
    `SELECT id, document->>'current_period_end' AS period_end FROM ${subscriptionsTable(schema)}
     WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE`,
    [ids],
  );
  const read = new Map(subscriptions.map((s) => [s.id, Date.parse(s.current_period_end)]));
  if (locked.rows.some((row) => Date.parse(row.period_end) !== read.get(row.id))) return true;
  const { rows } = await tx.query(
    `SELECT 1 FROM ${switchesTable(schema)} WHERE subscription_id = ANY($1::text[])
     UNION ALL
     SELECT 1 FROM ${balancesTable(schema)} WHERE customer_id = ANY($2::text[]) AND balance <> 0
     LIMIT 1`,
    [ids, subscriptions.map((s) => s.customer_id)],
  );
  return rows.length > 0;
}

/** Adds the customer's balance to the renewal invoice (credit taken off, or what is owed added), once. */
export async function withCustomerBalance(
  tx: EventStoreTransaction,
  store: EventStore,
  tenant: Tenant,
  command: OpenInvoice,
): Promise<void> {
  const { data } = command;
  const amount = data.lines.reduce((sum, line) => sum + line.amount, 0) - data.discountAmount;
  const line = await takeBalanceForInvoice(tx, store, tenant, {
    customerId: data.customerId,
    subscriptionId: data.subscriptionId,
    invoiceId: data.invoiceId,
    amount,
    period: { start: data.periodStart, end: data.periodEnd },
    now: data.now,
  });
  if (line) data.lines.push(line);
}

/** The subscriptions (of those given) held by a switch or whose customer has a balance. */
export async function offThePlainPathIds(
  sql: SqlExecutor,
  schema: string,
  subscriptions: Array<{ id: string; customer_id: string }>,
): Promise<Set<string>> {
  if (subscriptions.length === 0) return new Set();
  const { rows } = await sql.query<{ id: string }>(
    `SELECT s.id FROM ${subscriptionsTable(schema)} s
     WHERE s.id = ANY($1::text[]) AND (
       EXISTS (SELECT 1 FROM ${switchesTable(schema)} w WHERE w.subscription_id = s.id)
       OR EXISTS (SELECT 1 FROM ${balancesTable(schema)} b WHERE b.customer_id = s.customer_id AND b.balance <> 0))`,
    [subscriptions.map((s) => s.id)],
  );
  return new Set(rows.map((row) => row.id));
}

/** How long a renewal waits for a switch under way to end (its charge takes a moment). */
const SWITCH_WAIT_MS = 10_000;

/**
 * The renewal found the subscription held by a switch: waits for the switch to end, then runs
 * `again` (which finds the subscription in a new period, or as it was). A hold that outlasts
 * the wait is a crashed switch: it is settled (`settleHeldSwitch`), then `again`. Still held:
 * nothing done now; the next run tries again.
 */
export async function afterSwitch(
  context: ServiceContext,
  tenant: Tenant,
  subscriptionId: string,
  again: () => Promise<boolean>,
): Promise<boolean> {
  const { database, tables } = context.store;
  const held = async () =>
    (await database.query(`SELECT 1 FROM ${switchesTable(tables.schema)} WHERE subscription_id = $1`, [subscriptionId]))
      .rows.length > 0;
  const deadline = Date.now() + SWITCH_WAIT_MS;
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    if (!(await held())) return again();
  }
  if ((await settleHeldSwitch(context, tenant, subscriptionId)) && !(await held())) return again();
  return false;
}
