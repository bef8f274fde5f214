import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { ProductFacts } from '../validation/validate';
import type { Tenant } from '@billing/service';

/**
 * Replicas of other services' data, fed from Kafka and eventually consistent: the catalog's
 * products (for `applicable_products`) and checkout's completed orders (for new/existing
 * customer eligibility).
 */
export const replicaTables = (schema: string) => ({
  products: `${schema}.product_replica`,
  orders: `${schema}.completed_orders`,
});

export async function migrateReplicas(store: EventStore): Promise<void> {
  const t = replicaTables(store.tables.schema);
  await store.database.exec(`
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

/** A customer is an existing customer once checkout completed an order for them (by id or external id). */
export async function hasCompletedOrders(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  who: { customerId: string | null; externalId: string | null },
): Promise<boolean> {
  if (who.customerId === null && who.externalId === null) return false;
  const { rows } = await sql.query(
    `SELECT 1 FROM ${replicaTables(schema).orders}
     WHERE organization = $1 AND environment = $2
       AND ((customer_id IS NOT NULL AND customer_id = $3::text)
         OR (external_customer_id IS NOT NULL AND external_customer_id = $4::text))
     LIMIT 1`,
    [tenant.organization, tenant.environment, who.customerId, who.externalId],
  );
  return rows.length > 0;
}
