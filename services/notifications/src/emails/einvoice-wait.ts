import { type DomainEventEnvelope, EinvoiceSettingsConfiguredData } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { EinvoiceOutcome, EmailRequest } from './from-event';
import { emailTables } from './outbox';

/** Billing's internal event when an organization's e-invoice settings are set. */
export const EINVOICE_SETTINGS_CONFIGURED = 'EinvoiceSettingsConfigured';
/** How long a receipt waits for its e-invoice's number (`EMAIL_EINVOICE_WAIT_MS`). */
export const DEFAULT_EINVOICE_WAIT_MS = 10 * 60_000;

type Tenant = { organization: string; environment: string };

/**
 * Whether billing issues e-invoices for an organization in an environment: a replica of its
 * e-invoice settings (their credentials stay in billing), unless a later change is recorded.
 */
export async function recordEinvoicing(sql: SqlExecutor, schema: string, event: DomainEventEnvelope): Promise<void> {
  const parsed = EinvoiceSettingsConfiguredData.safeParse(event.data);
  if (!parsed.success) return;
  const { organization, environment, object } = parsed.data;
  const table = emailTables(schema).einvoicing;
  await sql.query(
    `INSERT INTO ${table} (organization, environment, enabled, changed_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (organization, environment) DO UPDATE SET enabled = EXCLUDED.enabled, changed_at = EXCLUDED.changed_at
     WHERE ${table}.changed_at <= EXCLUDED.changed_at`,
    [organization, environment, object.enabled, object.updated_at ?? event.occurred_at],
  );
}

type KnownEinvoice = { status: 'awaited' | 'issued' | 'failed'; number: string | null };

/**
 * The payment's e-invoice as known, in one statement. When the organization issues e-invoices
 * (a replica of billing's settings; their credentials stay in billing) its row is marked awaited
 * first: the row is the meeting point of the receipt and the e-invoice, whose events come on
 * different topics in any order, and whichever writes it second waits for the first to commit,
 * then reads what it wrote. Otherwise the row is only read.
 */
async function knownEinvoice(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  ref: string,
  at: Date,
  issuing: boolean,
) {
  const t = emailTables(schema);
  const { rows } = await sql.query<KnownEinvoice>(
    `WITH awaited AS (
       INSERT INTO ${t.einvoices} (organization, environment, ref, status, number, updated_at)
       SELECT $1, $2, $3, 'awaited', NULL, $4
       WHERE $5::boolean AND EXISTS (SELECT 1 FROM ${t.einvoicing} s
                                     WHERE s.organization = $1 AND s.environment = $2 AND s.enabled)
       ON CONFLICT (organization, environment, ref) DO UPDATE SET status = ${t.einvoices}.status
       RETURNING status, number
     )
     SELECT status, number FROM awaited
     UNION ALL
     SELECT status, number FROM ${t.einvoices}
     WHERE organization = $1 AND environment = $2 AND ref = $3 AND NOT EXISTS (SELECT 1 FROM awaited)`,
    [tenant.organization, tenant.environment, ref, at, issuing],
  );
  return rows[0] ?? null;
}

/**
 * A receipt with its e-invoice: the number when billing issued it already; held for `waitMs`
 * when the organization issues e-invoices for this sale and none came yet (`releaseReceipt`
 * ends the wait); as it is otherwise (no e-invoices, a donation, issuing failed).
 */
export async function receiptWithEinvoice(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  receipt: EmailRequest,
  at: Date,
  waitMs: number,
): Promise<EmailRequest> {
  const ref = receipt.ref;
  if (receipt.kind !== 'receipt' || !ref) return receipt;
  const known = await knownEinvoice(sql, schema, tenant, ref, at, receipt.einvoiced === true);
  return {
    ...receipt,
    facts: { ...receipt.facts, einvoice_number: known?.number ?? null },
    hold_until: known?.status === 'awaited' ? new Date(at.getTime() + waitMs).toISOString() : null,
  };
}

/**
 * What became of a payment's e-invoice: remembered for a receipt still to come, and for one
 * queued, its number written in (a held one is released at once; issuing failed releases it
 * without). A receipt already claimed by the sender goes as it is. Answers whether one was
 * released or changed.
 */
export async function releaseReceipt(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  outcome: EinvoiceOutcome,
  at: Date,
): Promise<boolean> {
  const t = emailTables(schema);
  const params = [tenant.organization, tenant.environment, outcome.ref, outcome.number, at];
  await sql.query(
    `INSERT INTO ${t.einvoices} (organization, environment, ref, status, number, updated_at)
     VALUES ($1, $2, $3, $6, $4, $5)
     ON CONFLICT (organization, environment, ref) DO UPDATE
       SET status = EXCLUDED.status, number = EXCLUDED.number, updated_at = EXCLUDED.updated_at
     WHERE ${t.einvoices}.status <> 'issued'`,
    [...params, outcome.number ? 'issued' : 'failed'],
  );
  const { rowCount } = await sql.query(
    `UPDATE ${t.emails} SET
       facts = CASE WHEN $4::text IS NULL THEN facts ELSE jsonb_set(facts, '{einvoice_number}', to_jsonb($4::text)) END,
       next_attempt_at = CASE WHEN hold_until IS NULL THEN next_attempt_at ELSE $5 END,
       hold_until = NULL
     WHERE organization = $1 AND environment = $2 AND ref = $3 AND kind = 'receipt' AND status = 'QUEUED'
       AND (hold_until IS NOT NULL OR $4::text IS NOT NULL)`,
    params,
  );
  return rowCount > 0;
}
