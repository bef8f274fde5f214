import {
  BILLING_PUBLIC_EVENTS,
  type DomainEventEnvelope,
  type Einvoice,
  EinvoiceIssuedData,
  type EinvoiceStatus,
} from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { Session } from './session';

/** The e-invoice events of `billing.events` the thank-you pages need. */
export const ORDER_EINVOICE_EVENTS: string[] = [
  BILLING_PUBLIC_EVENTS.EinvoiceIssued,
  BILLING_PUBLIC_EVENTS.EinvoiceVoided,
];

const table = (schema: string) => `${schema}.order_einvoices`;

/**
 * The e-invoice billing issued for a checkout order (a one-time purchase's, or a subscription's
 * first invoice's), for the thank-you pages: a replica of `einvoice.issued` and
 * `einvoice.voided`, written in the billing consumer's inbox transaction. An e-invoice not yet
 * issued has no row; the page then says where it will go.
 */
export async function migrateOrderEinvoices(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${table(schema)} (
      order_id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      einvoice_id text NOT NULL,
      status text NOT NULL,
      number text,
      random_code text,
      buyer jsonb NOT NULL,
      updated_at timestamptz NOT NULL
    );
  `);
}

/** Records the e-invoice an event carries, unless a later change of it is recorded already. */
export async function recordOrderEinvoice(sql: SqlExecutor, schema: string, event: DomainEventEnvelope) {
  const parsed = EinvoiceIssuedData.safeParse(event.data);
  if (!parsed.success || !parsed.data.object.order_id) return;
  const { organization, environment, object } = parsed.data;
  await sql.query(
    `INSERT INTO ${table(schema)}
       (order_id, organization, environment, einvoice_id, status, number, random_code, buyer, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
     ON CONFLICT (order_id) DO UPDATE SET einvoice_id = EXCLUDED.einvoice_id, status = EXCLUDED.status,
       number = EXCLUDED.number, random_code = EXCLUDED.random_code, buyer = EXCLUDED.buyer,
       updated_at = EXCLUDED.updated_at
     WHERE ${table(schema)}.updated_at <= EXCLUDED.updated_at`,
    [
      object.order_id,
      organization,
      environment,
      object.id,
      object.status,
      object.number,
      object.random_code,
      JSON.stringify(object.buyer),
      object.updated_at,
    ],
  );
}

export type OrderEinvoice = {
  status: EinvoiceStatus;
  number: string | null;
  random_code: string | null;
  buyer: Einvoice;
};

/** The e-invoice of the session's order, once billing issued it; only its organization's and environment's. */
export async function findOrderEinvoice(
  sql: SqlExecutor,
  schema: string,
  session: Pick<Session, 'order' | 'organization' | 'environment'>,
): Promise<OrderEinvoice | null> {
  const { rows } = await sql.query<OrderEinvoice>(
    `SELECT status, number, random_code, buyer FROM ${table(schema)}
     WHERE order_id = $1 AND organization = $2 AND environment = $3`,
    [session.order.id, session.organization, session.environment],
  );
  return rows[0] ?? null;
}
