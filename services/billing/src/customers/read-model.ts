import { type Customer, emailKey } from '@billing/contracts';
import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { customerEvents } from './customer';

export const customersTable = (schema: string) => `${schema}.customers`;

export async function migrateCustomersReadModel(store: EventStore): Promise<void> {
  const table = customersTable(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${table} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      email_key text NOT NULL,
      external_id text,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      orders_count integer NOT NULL DEFAULT 0,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
    -- One customer per email and one holder per external id in an organization and environment;
    -- a concurrent second writer fails here and its command is retried or answered 409.
    CREATE UNIQUE INDEX IF NOT EXISTS customers_email ON ${table} (organization, environment, email_key);
    CREATE UNIQUE INDEX IF NOT EXISTS customers_external_id ON ${table} (organization, environment, external_id)
      WHERE external_id IS NOT NULL;
    -- The card renewals charge (internal; not in the customer resource).
    ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS payment_method jsonb;
    CREATE INDEX IF NOT EXISTS customers_newest_first ON ${table} (organization, environment, created_at DESC, id DESC);
  `);
}

/** Emails match case-insensitively: one buyer is one customer whatever the case typed. */
export { emailKey };

/**
 * Applies customer events in the append's transaction. An event at or below the row's stream
 * version was applied already and is skipped, so replaying is harmless.
 */
export async function projectCustomers(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = customersTable(schema);
  for (const recorded of events) {
    const event = customerEvents.of(recorded);
    if (!event) continue;
    switch (event.type) {
      case 'CustomerCreated': {
        const c = event.data.object;
        await sql.query(
          `INSERT INTO ${table} (id, organization, environment, email_key, external_id, status, created_at, stream_version, document)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (id) DO NOTHING`,
          [
            c.id,
            event.data.organization,
            event.data.environment,
            emailKey(c.email),
            c.external_id,
            c.status,
            c.created_at,
            recorded.stream_version,
            JSON.stringify(c),
          ],
        );
        break;
      }
      case 'CustomerUpdated': {
        const c: Customer = event.data.object;
        await sql.query(
          `UPDATE ${table} SET external_id = $2, status = $3, document = $4, stream_version = $5
           WHERE id = $1 AND stream_version < $5`,
          [c.id, c.external_id, c.status, JSON.stringify(c), recorded.stream_version],
        );
        break;
      }
      case 'CustomerPaymentMethodSaved':
        await sql.query(
          `UPDATE ${table} SET payment_method = $2, stream_version = $3 WHERE id = $1 AND stream_version < $3`,
          [event.data.customer_id, JSON.stringify(event.data.payment_method), recorded.stream_version],
        );
        break;
      case 'CustomerOrderRecorded':
        await sql.query(
          `UPDATE ${table} SET orders_count = orders_count + 1, stream_version = $2
           WHERE id = $1 AND stream_version < $2`,
          [event.data.customer_id, recorded.stream_version],
        );
        break;
    }
  }
}
