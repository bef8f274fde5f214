import { type DomainEventEnvelope, type Environment, EinvoiceSettingsConfiguredData } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';

/** Billing's internal event when an organization's e-invoice settings are set. */
export const EINVOICE_SETTINGS_CONFIGURED = 'EinvoiceSettingsConfigured';

const table = (schema: string) => `${schema}.einvoice_organizations`;

/**
 * Whether billing issues e-invoices for an organization in an environment (a session's
 * `einvoice_enabled`), and whether buyers may donate them (the hosted page's choices): a
 * replica of billing's e-invoice settings, kept from `billing.events`
 * (their credentials stay in billing). Read through a 5-second cache per process, so a checkout
 * does not pay a statement for it; a change shows within that.
 */
export async function migrateEinvoiceOrganizations(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${table(schema)} (
      organization text NOT NULL,
      environment text NOT NULL,
      enabled boolean NOT NULL,
      changed_at timestamptz NOT NULL,
      PRIMARY KEY (organization, environment)
    );
    -- Billing offers donations unless the organization turned them off.
    ALTER TABLE ${table(schema)} ADD COLUMN IF NOT EXISTS donation_offered boolean NOT NULL DEFAULT true;
  `);
}

/** Records the settings an event carries, unless a later change is recorded already. */
export async function recordEinvoiceSettings(sql: SqlExecutor, schema: string, event: DomainEventEnvelope) {
  const parsed = EinvoiceSettingsConfiguredData.safeParse(event.data);
  if (!parsed.success) return;
  const { organization, environment, object } = parsed.data;
  await sql.query(
    `INSERT INTO ${table(schema)} (organization, environment, enabled, donation_offered, changed_at)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (organization, environment) DO UPDATE SET enabled = EXCLUDED.enabled,
       donation_offered = EXCLUDED.donation_offered, changed_at = EXCLUDED.changed_at
     WHERE ${table(schema)}.changed_at <= EXCLUDED.changed_at`,
    [organization, environment, object.enabled, object.donation_offered, object.updated_at ?? event.occurred_at],
  );
}

/** What the hosted page offers: whether e-invoices are issued at all, and whether buyers may donate them. */
export type EinvoiceOffer = { enabled: boolean; donationOffered: boolean };

const NOT_ISSUED: EinvoiceOffer = { enabled: false, donationOffered: false };
/** How long an offer is kept, on the process's clock. */
export const EINVOICE_OFFER_CACHE_MS = 5_000;
const caches = new WeakMap<ServiceContext, Map<string, { offer: EinvoiceOffer; until: number }>>();

export async function einvoiceOffer(
  context: ServiceContext,
  organization: string,
  environment: Environment,
): Promise<EinvoiceOffer> {
  let cache = caches.get(context);
  if (!cache) caches.set(context, (cache = new Map()));
  const key = `${organization}\n${environment}`;
  // The cache's age is measured on the process's own clock, not the injected one: a clock that
  // stands still (a test's) would otherwise keep the first answer for ever.
  const at = performance.now();
  const cached = cache.get(key);
  if (cached && cached.until > at) return cached.offer;
  const { store } = context;
  const { rows } = await store.database.query<{ enabled: boolean; donation_offered: boolean }>(
    `SELECT enabled, donation_offered FROM ${table(store.tables.schema)} WHERE organization = $1 AND environment = $2`,
    [organization, environment],
  );
  const row = rows[0];
  const offer = row?.enabled ? { enabled: true, donationOffered: row.donation_offered } : NOT_ISSUED;
  cache.set(key, { offer, until: at + EINVOICE_OFFER_CACHE_MS });
  return offer;
}

export async function einvoiceEnabled(context: ServiceContext, organization: string, environment: Environment) {
  return (await einvoiceOffer(context, organization, environment)).enabled;
}
