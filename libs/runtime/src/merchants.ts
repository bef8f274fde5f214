import {
  type DomainEventEnvelope,
  ORGANIZATION_EVENTS,
  OrganizationCreatedData,
  OrganizationSettingsUpdatedData,
} from '@billing/contracts';
import { exactlyOnce } from '@billing/bus';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import { type ServiceContext, topicOf } from './run-service';

/** How the hosted pages present the merchant: its name, and its logo and brand colour if set. */
export type Merchant = {
  name: string;
  logo_url: string | null;
  brand_color: string | null;
  website_url: string | null;
};

export const merchantsTable = (schema: string) => `${schema}.merchants`;

export async function migrateMerchants(store: EventStore): Promise<void> {
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${merchantsTable(store.tables.schema)} (
      organization text PRIMARY KEY,
      name text NOT NULL,
      logo_url text,
      brand_color text,
      website_url text,
      updated_at timestamptz NOT NULL
    );
  `);
}

export async function findMerchant(sql: SqlExecutor, schema: string, organization: string): Promise<Merchant | null> {
  const { rows } = await sql.query<Merchant>(
    `SELECT name, logo_url, brand_color, website_url FROM ${merchantsTable(schema)} WHERE organization = $1`,
    [organization],
  );
  return rows[0] ?? null;
}

/**
 * The merchants as the gateway's organizations say (a replica from `gateway.events`, eventually
 * consistent): a page shown before the replica caught up names no merchant.
 */
export async function startMerchantsConsumer(context: ServiceContext): Promise<() => Promise<void>> {
  const { store, infrastructure } = context;
  const table = merchantsTable(store.tables.schema);
  const groupId = `${store.tables.schema.replaceAll('"', '')}-merchants`;
  const apply = async (event: DomainEventEnvelope, tx: SqlExecutor) => {
    if (event.type === ORGANIZATION_EVENTS.OrganizationCreated) {
      const data = OrganizationCreatedData.parse(event.data);
      await tx.query(
        `INSERT INTO ${table} (organization, name, updated_at) VALUES ($1, $2, $3) ON CONFLICT (organization) DO NOTHING`,
        [data.organization_id, data.name, data.created_at],
      );
      return;
    }
    const data = OrganizationSettingsUpdatedData.parse(event.data);
    // Older updates arriving late change nothing: the row keeps the newest of each.
    await tx.query(
      `UPDATE ${table} SET name = COALESCE($2, name),
         logo_url = CASE WHEN $3::boolean THEN $4 ELSE logo_url END,
         brand_color = CASE WHEN $5::boolean THEN $6 ELSE brand_color END,
         website_url = CASE WHEN $8::boolean THEN $9 ELSE website_url END,
         updated_at = $7
       WHERE organization = $1 AND updated_at <= $7`,
      [
        data.organization_id,
        data.name ?? null,
        data.logo_url !== undefined,
        data.logo_url ?? null,
        data.brand_color !== undefined,
        data.brand_color ?? null,
        data.updated_at,
        data.website_url !== undefined,
        data.website_url ?? null,
      ],
    );
  };
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: [topicOf('gateway')],
    handler: exactlyOnce(store, groupId, (event, tx) => apply(event, tx), {
      only: [ORGANIZATION_EVENTS.OrganizationCreated, ORGANIZATION_EVENTS.OrganizationSettingsUpdated],
    }),
  });
  return () => subscription.stop();
}
