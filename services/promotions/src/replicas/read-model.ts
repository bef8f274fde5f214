import { emailKey } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { CustomerRef } from '../promotion-codes/decide';
import type { ProductFacts } from '../validation/validate';
import type { Tenant } from '@billing/service';

/**
 * Replicas of other services' data, fed from Kafka and eventually consistent: the catalog's
 * products (for `applicable_products`), checkout's completed orders (for new/existing
 * customer eligibility) and billing's customers (every name of a customer, so that a rule
 * holds however the customer is named: docs/customer-identity.md).
 */
export const replicaTables = (schema: string) => ({
  products: `${schema}.product_replica`,
  orders: `${schema}.completed_orders`,
  customers: `${schema}.customer_replica`,
});

export async function migrateReplicas(store: EventStore): Promise<void> {
  const t = replicaTables(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${t.products} (
      organization text NOT NULL,
      environment text NOT NULL,
      id text NOT NULL,
      active boolean NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL,
      -- Keyed by tenant too: another organization's event must never touch this row.
      PRIMARY KEY (organization, environment, id)
    );
    CREATE TABLE IF NOT EXISTS ${t.orders} (
      organization text NOT NULL,
      environment text NOT NULL,
      order_id text NOT NULL,
      session_id text NOT NULL,
      customer_id text,
      external_customer_id text,
      customer_email text,
      completed_at timestamptz NOT NULL,
      PRIMARY KEY (organization, environment, order_id)
    );
    CREATE INDEX IF NOT EXISTS completed_orders_customer ON ${t.orders} (organization, environment, customer_id);
    CREATE INDEX IF NOT EXISTS completed_orders_external ON ${t.orders} (organization, environment, external_customer_id);
    CREATE INDEX IF NOT EXISTS completed_orders_email ON ${t.orders} (organization, environment, lower(customer_email));
    CREATE TABLE IF NOT EXISTS ${t.customers} (
      organization text NOT NULL,
      environment text NOT NULL,
      id text NOT NULL,
      email_key text NOT NULL,
      external_id text,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization, environment, id)
    );
    CREATE INDEX IF NOT EXISTS customer_replica_email ON ${t.customers} (organization, environment, email_key);
    CREATE INDEX IF NOT EXISTS customer_replica_external ON ${t.customers} (organization, environment, external_id);
  `);
}

/** Active products of the tenant among `ids`. */
export async function findProducts(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  ids: string[],
): Promise<ProductFacts[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql.query<{ document: ProductFacts }>(
    `SELECT document FROM ${replicaTables(schema).products}
     WHERE organization = $1 AND environment = $2 AND active AND id = ANY($3::text[])`,
    [tenant.organization, tenant.environment, ids],
  );
  return rows.map((r) => r.document);
}

/** A customer is an existing customer once checkout completed an order for them, under any of their names. */
export async function hasCompletedOrders(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  who: CustomerRef,
): Promise<boolean> {
  if (who.customerId === null && who.externalId === null && who.email === null) return false;
  const { rows } = await sql.query(
    `SELECT 1 FROM ${replicaTables(schema).orders}
     WHERE organization = $1 AND environment = $2
       AND ((customer_id IS NOT NULL AND customer_id = $3::text)
         OR (external_customer_id IS NOT NULL AND external_customer_id = $4::text)
         OR (customer_email IS NOT NULL AND lower(customer_email) = $5::text))
     LIMIT 1`,
    [tenant.organization, tenant.environment, who.customerId, who.externalId, who.email],
  );
  return rows.length > 0;
}

/**
 * Every name of the customer the given names point to (precedence customer id, external id,
 * email), from billing's customers; the given names alone when billing has nobody (yet).
 */
export async function customerNames(sql: SqlExecutor, schema: string, tenant: Tenant, given: CustomerRef) {
  const { rows } = await sql.query<{ id: string; email_key: string; external_id: string | null; rank: number }>(
    `SELECT id, email_key, external_id,
       CASE WHEN id = $3::text THEN 1 WHEN external_id = $4::text THEN 2 ELSE 3 END AS rank
     FROM ${replicaTables(schema).customers}
     WHERE organization = $1 AND environment = $2
       AND (id = $3::text OR external_id = $4::text OR email_key = $5::text)
     ORDER BY rank LIMIT 1`,
    [tenant.organization, tenant.environment, given.customerId, given.externalId, given.email],
  );
  const known = rows[0];
  if (!known) return given;
  return {
    customerId: known.id,
    externalId: given.externalId ?? known.external_id,
    email: given.email ?? known.email_key,
  };
}

/** A customer as billing publishes it: `customer.created` and `customer.updated` carry it whole. */
export async function upsertCustomer(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  customer: { id: string; email: string; external_id: string | null; updated_at: string },
) {
  const table = replicaTables(schema).customers;
  await sql.write(
    `INSERT INTO ${table} (organization, environment, id, email_key, external_id, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6)
     ON CONFLICT (organization, environment, id) DO UPDATE
       SET email_key = EXCLUDED.email_key, external_id = EXCLUDED.external_id, updated_at = EXCLUDED.updated_at
     WHERE ${table}.updated_at <= EXCLUDED.updated_at`,
    [
      tenant.organization,
      tenant.environment,
      customer.id,
      emailKey(customer.email),
      customer.external_id,
      customer.updated_at,
    ],
  );
}
