import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';

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

/** A CREDITS order's purchase as a refund finds it. */
export type CreditPurchase = {
  customer_id: string;
  amount_paid: number;
  credits: string;
  refunded: number;
  taken_back: string;
  refund_ids: string[];
};

/** The order's purchase, locked until the caller's transaction ends; undefined for other orders. */
export async function creditPurchaseForUpdate(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  orderId: string,
): Promise<CreditPurchase | undefined> {
  const { rows } = await sql.query<CreditPurchase>(
    `SELECT customer_id, amount_paid, credits, refunded, taken_back, refund_ids FROM ${purchasesTable(schema)}
     WHERE order_id = $1 AND organization = $2 AND environment = $3 FOR UPDATE`,
    [orderId, tenant.organization, tenant.environment],
  );
  return rows[0];
}

/** Records a refund of the order: what is refunded in all now, and the credits it took back. */
export async function recordPurchaseRefund(
  sql: SqlExecutor,
  schema: string,
  refund: { orderId: string; refundId: string; refundedInAll: number; takenBack: number },
): Promise<void> {
  await sql.write(
    `UPDATE ${purchasesTable(schema)} SET refunded = $2, taken_back = taken_back + $3, refund_ids = refund_ids || $4::text
     WHERE order_id = $1`,
    [refund.orderId, refund.refundedInAll, refund.takenBack, refund.refundId],
  );
}
