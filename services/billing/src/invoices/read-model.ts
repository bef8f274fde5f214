import type { Invoice } from '@billing/contracts';
import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';

export const invoicesTable = (schema: string) => `${schema}.invoices`;

export async function migrateInvoicesReadModel(store: EventStore): Promise<void> {
  const table = invoicesTable(store.tables.schema);
  await store.database.exec(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      customer_id text NOT NULL,
      subscription_id text,
      created_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    CREATE INDEX IF NOT EXISTS invoices_subscription ON ${table} (subscription_id);
  `);
}

export async function projectInvoices(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  for (const event of events) {
    if (event.type !== 'InvoicePaid') continue;
    const invoice = (event.data as { object: Invoice }).object;
    await sql.query(
      `INSERT INTO ${invoicesTable(schema)} (id, organization, environment, customer_id, subscription_id, created_at, stream_version, document)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (id) DO NOTHING`,
      [
        invoice.id,
        event.organization,
        event.environment,
        invoice.customer_id,
        invoice.subscription_id,
        invoice.created_at,
        event.stream_version,
        JSON.stringify(invoice),
      ],
    );
  }
}

export async function invoicesOfSubscription(sql: SqlExecutor, schema: string, subscriptionId: string) {
  const { rows } = await sql.query<{ document: Invoice }>(
    `SELECT document FROM ${invoicesTable(schema)} WHERE subscription_id = $1 ORDER BY created_at`,
    [subscriptionId],
  );
  return rows.map((r) => r.document);
}
