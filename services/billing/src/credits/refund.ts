import { type DomainEventEnvelope, RefundSucceededData, newId } from '@billing/contracts';
import type { EventStore, EventStoreTransaction, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { timeOn } from '../test-clocks/read-model';
import { findCustomer } from '../customers/queries';
import { creditsAggregate } from './aggregate';
import { ledgerSettingsOf } from './ledger-settings';
import { spendableCredits } from './queries';

const purchasesTable = (schema: string) => `${schema}.credit_purchases`;

/** What each CREDITS order paid and granted, and how much of it was refunded and taken back. */
export async function migrateCreditPurchases(store: EventStore): Promise<void> {
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${purchasesTable(store.tables.schema)} (
      order_id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      customer_id text NOT NULL,
      amount_paid integer NOT NULL,
      credits bigint NOT NULL,
      refunded integer NOT NULL DEFAULT 0,
      taken_back bigint NOT NULL DEFAULT 0,
      refund_ids text[] NOT NULL DEFAULT '{}'
    );
  `);
}

/** Remembers a CREDITS order's payment and grant, in the transaction that grants it. */
export async function recordCreditPurchase(
  sql: SqlExecutor,
  schema: string,
  purchase: Tenant & { orderId: string; customerId: string; amountPaid: number; credits: number },
): Promise<void> {
  await sql.write(
    `INSERT INTO ${purchasesTable(schema)} (order_id, organization, environment, customer_id, amount_paid, credits)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (order_id) DO NOTHING`,
    [
      purchase.orderId,
      purchase.organization,
      purchase.environment,
      purchase.customerId,
      purchase.amountPaid,
      purchase.credits,
    ],
  );
}

/**
 * Credits to have taken back once `refunded` of `amountPaid` TWD is refunded: the refunded share
 * of what the order granted, rounded up, so that a customer never keeps credits they no longer
 * paid for. BigInt: credits times TWD can pass 2^53.
 */
export function creditsToTakeBack(credits: number, refunded: number, amountPaid: number): number {
  if (amountPaid <= 0) return 0;
  const share = Math.min(refunded, amountPaid);
  return Number((BigInt(credits) * BigInt(share) + BigInt(amountPaid - 1)) / BigInt(amountPaid));
}

type PurchaseRow = {
  customer_id: string;
  amount_paid: number;
  credits: string;
  refunded: number;
  taken_back: string;
  refund_ids: string[];
};

/**
 * A succeeded refund of a CREDITS order takes back the refunded share of its credits (docs/credits.md),
 * as far as the customer still has credits: the rest was spent. Run in billing's consumer
 * transaction with the inbox row; a refund seen already changes nothing.
 */
export async function takeBackRefundedCredits(
  store: EventStore,
  tx: EventStoreTransaction,
  event: DomainEventEnvelope,
  now: () => Date,
): Promise<void> {
  const parsed = RefundSucceededData.safeParse(event.data);
  if (!parsed.success || parsed.data.object.status !== 'succeeded' || !parsed.data.object.order_id) return;
  const refund = parsed.data.object;
  const { schema } = store.tables;
  const tenant: Tenant = { organization: event.organization, environment: event.environment };
  const { rows } = await tx.query<PurchaseRow>(
    `SELECT customer_id, amount_paid, credits, refunded, taken_back, refund_ids FROM ${purchasesTable(schema)}
     WHERE order_id = $1 AND organization = $2 AND environment = $3 FOR UPDATE`,
    [refund.order_id, tenant.organization, tenant.environment],
  );
  const purchase = rows[0];
  if (!purchase || purchase.refund_ids.includes(refund.id)) return;
  const refunded = purchase.refunded + refund.amount;
  const owed =
    creditsToTakeBack(Number(purchase.credits), refunded, purchase.amount_paid) - Number(purchase.taken_back);
  const take = owed > 0 ? await takeBack(store, tx, tenant, purchase.customer_id, owed, refund, now) : 0;
  await tx.write(
    `UPDATE ${purchasesTable(schema)} SET refunded = $2, taken_back = taken_back + $3, refund_ids = refund_ids || $4::text
     WHERE order_id = $1`,
    [refund.order_id, refunded, take, refund.id],
  );
}

/** Takes back up to `owed` credits, no more than the customer has at their time; answers how many. */
async function takeBack(
  store: EventStore,
  tx: EventStoreTransaction,
  tenant: Tenant,
  customerId: string,
  owed: number,
  refund: { id: string; order_id: string | null },
  now: () => Date,
): Promise<number> {
  const { schema } = store.tables;
  const customer = await findCustomer(tx, schema, tenant, { by: 'id', value: customerId });
  const at = await timeOn(tx, schema, tenant, customer?.test_clock, now);
  const amount = Math.min(owed, await spendableCredits(tx, schema, tenant, customerId, at));
  if (amount <= 0) return 0;
  await creditsAggregate.handleInTransaction(
    tx,
    store,
    customerId,
    {
      type: 'AdjustCredits',
      data: {
        customerId,
        now: at,
        adjustmentId: newId('creditAdjustment'),
        amount,
        reason: `Refund ${refund.id} of order ${refund.order_id}`,
        ...(await ledgerSettingsOf(store, tenant, tx)),
      },
    },
    { ...tenant, occurredAt: at },
  );
  return amount;
}
