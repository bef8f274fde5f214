import { newId } from '@billing/contracts';
import type { EventStore, SqlExecutor } from '@billing/eventstore';
import type { PageLanguage } from '@billing/service';
import type { EmailFacts, EmailKind } from './compose';
import type { EmailRequest } from './from-event';

/**
 * Where an email is:
 * - QUEUED: due at `next_attempt_at`;
 * - SENDING: a sender claimed it, durably, before handing it to the SMTP server;
 * - SENT: the SMTP server accepted it; KEPT: shown in the mailbox only (Sandbox, or no SMTP);
 * - FAILED: refused for good, or out of attempts; SKIPPED: nobody to send it to;
 * - INTERRUPTED: its sender stopped between handing it over and recording the answer, or the
 *   answer was lost: it may have been sent, so it is never sent again on its own.
 */
export type EmailStatus = 'QUEUED' | 'SENDING' | 'SENT' | 'KEPT' | 'FAILED' | 'SKIPPED' | 'INTERRUPTED';

export interface EmailRow {
  id: string;
  organization: string;
  environment: 'SANDBOX' | 'PRODUCTION';
  event_id: string;
  kind: EmailKind;
  customer_id: string | null;
  order_id: string | null;
  to_address: string | null;
  locale: PageLanguage | null;
  facts: EmailFacts;
  status: EmailStatus;
  attempts: number;
  next_attempt_at: Date;
  /** A receipt held for its e-invoice's number until then; null once released or tried. */
  hold_until: Date | null;
  subject: string | null;
  text_body: string | null;
  html_body: string | null;
  error: string | null;
  created_at: Date;
  sent_at: Date | null;
}

export const emailTables = (schema: string) => ({
  emails: `${schema}.emails`,
  orders: `${schema}.email_orders`,
  settings: `${schema}.email_settings`,
  buyers: `${schema}.email_buyers`,
  einvoicing: `${schema}.email_einvoice_organizations`,
  einvoices: `${schema}.email_einvoices`,
});

export async function migrateEmailOutbox(store: EventStore): Promise<void> {
  const t = emailTables(store.tables.schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
    CREATE TABLE IF NOT EXISTS ${t.emails} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      event_id text NOT NULL,
      kind text NOT NULL,
      customer_id text,
      order_id text,
      ref text,
      to_address text,
      locale text,
      facts jsonb NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      lease_until timestamptz,
      subject text,
      text_body text,
      html_body text,
      error text,
      created_at timestamptz NOT NULL,
      sent_at timestamptz,
      UNIQUE (event_id, kind)
    );
    CREATE INDEX IF NOT EXISTS emails_due ON ${t.emails} (next_attempt_at) WHERE status = 'QUEUED';
    CREATE INDEX IF NOT EXISTS emails_ref ON ${t.emails} (ref) WHERE status = 'QUEUED';
    CREATE INDEX IF NOT EXISTS emails_sending ON ${t.emails} (lease_until) WHERE status = 'SENDING';
    CREATE INDEX IF NOT EXISTS emails_mailbox ON ${t.emails} (organization, environment, created_at DESC, id DESC);
    CREATE TABLE IF NOT EXISTS ${t.orders} (
      organization text NOT NULL,
      environment text NOT NULL,
      order_id text NOT NULL,
      email text NOT NULL,
      locale text,
      PRIMARY KEY (organization, environment, order_id)
    );
    CREATE TABLE IF NOT EXISTS ${t.buyers} (
      organization text NOT NULL,
      environment text NOT NULL,
      email text NOT NULL,
      locale text NOT NULL,
      PRIMARY KEY (organization, environment, email)
    );
    CREATE TABLE IF NOT EXISTS ${t.settings} (
      organization text NOT NULL,
      environment text NOT NULL,
      disabled text[] NOT NULL DEFAULT '{}',
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization, environment)
    );
    ALTER TABLE ${t.emails} ADD COLUMN IF NOT EXISTS hold_until timestamptz;
    CREATE TABLE IF NOT EXISTS ${t.einvoicing} (
      organization text NOT NULL,
      environment text NOT NULL,
      enabled boolean NOT NULL,
      changed_at timestamptz NOT NULL,
      PRIMARY KEY (organization, environment)
    );
    CREATE TABLE IF NOT EXISTS ${t.einvoices} (
      organization text NOT NULL,
      environment text NOT NULL,
      ref text NOT NULL,
      status text NOT NULL,
      number text,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization, environment, ref)
    );
  `);
}

/** The kinds an organization switched off in an environment. */
export async function disabledKinds(
  sql: SqlExecutor,
  schema: string,
  tenant: { organization: string; environment: string },
): Promise<EmailKind[]> {
  const { rows } = await sql.query<{ disabled: EmailKind[] }>(
    `SELECT disabled FROM ${emailTables(schema).settings} WHERE organization = $1 AND environment = $2`,
    [tenant.organization, tenant.environment],
  );
  return rows[0]?.disabled ?? [];
}

export async function saveDisabledKinds(
  sql: SqlExecutor,
  schema: string,
  tenant: { organization: string; environment: string },
  disabled: EmailKind[],
  at: Date,
): Promise<void> {
  await sql.query(
    `INSERT INTO ${emailTables(schema).settings} (organization, environment, disabled, updated_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (organization, environment) DO UPDATE SET disabled = EXCLUDED.disabled, updated_at = EXCLUDED.updated_at`,
    [tenant.organization, tenant.environment, disabled, at],
  );
}

/**
 * Queues the email an event asks for, once per event and kind (a redelivered event queues
 * nothing), unless the organization switched its kind off. A one-time order's buyer is kept
 * for the order's refund.
 */
export async function queueEmail(
  sql: SqlExecutor,
  schema: string,
  event: { id: string; organization: string; environment: string },
  request: EmailRequest & { order_id: string | null },
  at: Date,
): Promise<void> {
  const t = emailTables(schema);
  if (request.kind === 'receipt' && request.order_id && request.email) {
    await sql.write(
      `INSERT INTO ${t.orders} (organization, environment, order_id, email, locale) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT DO NOTHING`,
      [event.organization, event.environment, request.order_id, request.email, request.locale],
    );
  }
  // One statement: nothing is queued of a kind the organization switched off.
  await sql.write(
    `INSERT INTO ${t.emails} (id, organization, environment, event_id, kind, customer_id, order_id, ref, to_address,
       locale, facts, status, next_attempt_at, hold_until, created_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'QUEUED',
       COALESCE($14::timestamptz, $12::timestamptz, $13::timestamptz), $14, $13
     WHERE NOT EXISTS (SELECT 1 FROM ${t.settings} s
                       WHERE s.organization = $2 AND s.environment = $3 AND $5::text = ANY (s.disabled))
     ON CONFLICT (event_id, kind) DO NOTHING`,
    [
      newId('email'),
      event.organization,
      event.environment,
      event.id,
      request.kind,
      request.customer_id,
      request.order_id,
      request.ref ?? null,
      request.email,
      request.locale,
      JSON.stringify(request.facts),
      request.due_at ?? null,
      at,
      request.hold_until ?? null,
    ],
  );
}

/** The language a buyer's checkout was in, for the emails about what they bought (the latest checkout's). */
export async function rememberBuyerLocale(
  sql: SqlExecutor,
  schema: string,
  tenant: { organization: string; environment: string },
  buyer: { email: string; locale: PageLanguage },
): Promise<void> {
  await sql.write(
    `INSERT INTO ${emailTables(schema).buyers} (organization, environment, email, locale) VALUES ($1, $2, lower($3), $4)
     ON CONFLICT (organization, environment, email) DO UPDATE SET locale = EXCLUDED.locale`,
    [tenant.organization, tenant.environment, buyer.email, buyer.locale],
  );
}

export async function buyerLocale(
  sql: SqlExecutor,
  schema: string,
  tenant: { organization: string; environment: string },
  email: string,
): Promise<PageLanguage | null> {
  const { rows } = await sql.query<{ locale: PageLanguage }>(
    `SELECT locale FROM ${emailTables(schema).buyers} WHERE organization = $1 AND environment = $2 AND email = lower($3)`,
    [tenant.organization, tenant.environment, email],
  );
  return rows[0]?.locale ?? null;
}

/** A checkout session or invoice was paid or closed: its reminders waiting to go out are dropped. */
export async function dropReminders(sql: SqlExecutor, schema: string, ref: string): Promise<void> {
  await sql.write(
    `UPDATE ${emailTables(schema).emails} SET status = 'SKIPPED', error = 'Paid or closed before the reminder was due'
     WHERE ref = $1 AND status = 'QUEUED' AND kind = 'payment_reminder'`,
    [ref],
  );
}

/** The buyer of a one-time order, as its receipt named them. */
export async function orderBuyer(
  sql: SqlExecutor,
  schema: string,
  email: Pick<EmailRow, 'organization' | 'environment' | 'order_id'>,
): Promise<{ email: string; locale: PageLanguage | null } | null> {
  const { rows } = await sql.query<{ email: string; locale: PageLanguage | null }>(
    `SELECT email, locale FROM ${emailTables(schema).orders} WHERE organization = $1 AND environment = $2 AND order_id = $3`,
    [email.organization, email.environment, email.order_id],
  );
  return rows[0] ?? null;
}

/**
 * Claims due emails, durably, before any is handed to an SMTP server: once this commits, no
 * other sender (another replica, or this one after a restart) takes them again. A held receipt
 * claimed once its wait passed is held no more: a later e-invoice does not hurry its retries.
 */
export async function claimDueEmails(sql: SqlExecutor, schema: string, at: Date, leaseUntil: Date, limit: number) {
  const { rows } = await sql.query<EmailRow>(
    `UPDATE ${emailTables(schema).emails} SET status = 'SENDING', attempts = attempts + 1, lease_until = $2, hold_until = NULL
     WHERE id IN (SELECT id FROM ${emailTables(schema).emails}
                  WHERE status = 'QUEUED' AND next_attempt_at <= $1
                  ORDER BY next_attempt_at LIMIT $3 FOR UPDATE SKIP LOCKED)
     RETURNING *`,
    [at, leaseUntil, limit],
  );
  return rows;
}

/**
 * Emails whose sender stopped while holding them (its lease ran out): they may have reached
 * the SMTP server, so they are marked INTERRUPTED, never sent again on their own.
 */
export async function markInterrupted(sql: SqlExecutor, schema: string, at: Date): Promise<number> {
  const { rowCount } = await sql.query(
    `UPDATE ${emailTables(schema).emails}
     SET status = 'INTERRUPTED', lease_until = NULL, error = 'The sender stopped before the answer was recorded'
     WHERE status = 'SENDING' AND lease_until < $1`,
    [at],
  );
  return rowCount;
}

export type EmailOutcome =
  | { status: 'SENT' | 'KEPT'; to: string; locale: PageLanguage; subject: string; text: string; html: string; at: Date }
  | { status: 'QUEUED'; error: string; retryAt: Date; to?: string }
  | { status: 'FAILED' | 'SKIPPED' | 'INTERRUPTED'; error: string; to?: string };

/** Records what became of a claimed email; only while this sender still holds it. */
export async function recordOutcome(sql: SqlExecutor, schema: string, id: string, outcome: EmailOutcome) {
  const t = emailTables(schema);
  if (outcome.status === 'SENT' || outcome.status === 'KEPT') {
    await sql.query(
      `UPDATE ${t.emails} SET status = $2, to_address = $3, locale = $4, subject = $5, text_body = $6, html_body = $7,
         sent_at = $8, lease_until = NULL, error = NULL
       WHERE id = $1 AND status = 'SENDING'`,
      [id, outcome.status, outcome.to, outcome.locale, outcome.subject, outcome.text, outcome.html, outcome.at],
    );
    return;
  }
  const failed = outcome as Exclude<EmailOutcome, { status: 'SENT' | 'KEPT' }>;
  await sql.query(
    `UPDATE ${t.emails} SET status = $2, error = $3, next_attempt_at = COALESCE($4, next_attempt_at),
       to_address = COALESCE($5, to_address), lease_until = NULL
     WHERE id = $1 AND status = 'SENDING'`,
    [id, failed.status, failed.error, failed.status === 'QUEUED' ? failed.retryAt : null, failed.to ?? null],
  );
}
