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
 * version was applied already and is skipped, so replaying is harmless. Orders and cards
 * recorded together on one customer (a paid checkout's) are written in one statement, with the
 * customer's creation when it came in the same append.
 */
export async function projectCustomers(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const table = customersTable(schema);
  for (let i = 0; i < events.length; i++) {
    const recorded = events[i]!;
    const event = customerEvents.of(recorded);
    if (!event) continue;
    switch (event.type) {
      case 'CustomerCreated': {
        const c = event.data.object;
        const after = ordersAndCardFrom(events, i + 1, recorded.stream);
        i = after.last;
        await sql.write(
          `INSERT INTO ${table} (id, organization, environment, email_key, external_id, status, created_at, stream_version,
             document, orders_count, payment_method)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (id) DO NOTHING`,
          [
            c.id,
            event.data.organization,
            event.data.environment,
            emailKey(c.email),
            c.external_id,
            c.status,
            c.created_at,
            events[after.last]!.stream_version,
            JSON.stringify(c),
            after.orders,
            after.paymentMethod,
          ],
        );
        break;
      }
      case 'CustomerUpdated': {
        const c: Customer = event.data.object;
        await sql.write(
          `UPDATE ${table} SET external_id = $2, status = $3, document = $4, stream_version = $5
           WHERE id = $1 AND stream_version < $5`,
          [c.id, c.external_id, c.status, JSON.stringify(c), recorded.stream_version],
        );
        break;
      }
      case 'CustomerPaymentMethodSaved':
      case 'CustomerOrderRecorded': {
        // These and the ones right after them were appended together: applied all or none.
        const run = ordersAndCardFrom(events, i, recorded.stream);
        i = run.last;
        await sql.write(
          `UPDATE ${table} SET orders_count = orders_count + $2, payment_method = coalesce($3, payment_method),
             stream_version = $4
           WHERE id = $1 AND stream_version < $5`,
          [
            event.data.customer_id,
            run.orders,
            run.paymentMethod,
            events[run.last]!.stream_version,
            recorded.stream_version,
          ],
        );
        break;
      }
    }
  }
}

/**
 * The orders and the last card recorded on `stream` from `events[from]` on, up to the first
 * other event: how many orders, the card (JSON) or null, and the index of the last one taken.
 */
function ordersAndCardFrom(events: RecordedEvent[], from: number, stream: string) {
  let orders = 0;
  let paymentMethod: string | null = null;
  let last = from - 1;
  for (let i = from; i < events.length && events[i]!.stream === stream; i++) {
    const event = customerEvents.of(events[i]!);
    if (event?.type === 'CustomerOrderRecorded') orders += 1;
    else if (event?.type === 'CustomerPaymentMethodSaved') paymentMethod = JSON.stringify(event.data.payment_method);
    else break;
    last = i;
  }
  return { orders, paymentMethod, last };
}
