import {
  type CreditGrant,
  type CreditLedgerEntry,
  type CreditLedgerEntryType,
  type CreditSource,
  type CreditsGrantedData,
  livemodeOf,
  unknownCursor,
} from '@billing/contracts';
import { type SqlExecutor, keysetPage } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { debtSettledBy } from './ledger';
import { creditTables } from './read-model';

type GrantRow = {
  id: string;
  customer_id: string;
  environment: Tenant['environment'];
  amount: string;
  remaining: string;
  source: CreditSource;
  source_id: string | null;
  reason: string | null;
  priority: number;
  expires_at: Date | null;
  created_at: Date;
};

type EntryRow = {
  id: string;
  environment: Tenant['environment'];
  type: CreditLedgerEntryType;
  amount: string;
  balance_after: string;
  grant_id: string | null;
  drawn_from: CreditLedgerEntry['drawn_from'];
  reason: string | null;
  metadata: Record<string, string> | null;
  created_at: Date;
};

const iso = (value: Date | null) => (value === null ? null : new Date(value).toISOString());

const grantResource = (row: GrantRow): CreditGrant => ({
  object: 'credit_grant',
  id: row.id,
  customer_id: row.customer_id,
  amount: Number(row.amount),
  remaining: Number(row.remaining),
  source: row.source,
  source_id: row.source_id,
  reason: row.reason,
  priority: row.priority,
  expires_at: iso(row.expires_at),
  created_at: iso(row.created_at)!,
  livemode: livemodeOf(row.environment),
});

/** A grant just made, from its event: nothing is drawn from it yet, but it may have repaid a debt. */
export const grantOfEvent = (d: CreditsGrantedData, environment: Tenant['environment']): CreditGrant => ({
  object: 'credit_grant',
  id: d.grant_id,
  customer_id: d.customer_id,
  amount: d.amount,
  remaining: d.amount - debtSettledBy(d),
  source: d.source,
  source_id: d.source_id,
  reason: d.reason,
  priority: d.priority,
  expires_at: d.expires_at,
  created_at: d.granted_at,
  livemode: livemodeOf(environment),
});

const entryResource = (row: EntryRow): CreditLedgerEntry => ({
  object: 'credit_ledger_entry',
  id: row.id,
  type: row.type,
  amount: Number(row.amount),
  balance_after: Number(row.balance_after),
  grant_id: row.grant_id,
  drawn_from: row.drawn_from,
  reason: row.reason,
  metadata: row.metadata,
  created_at: iso(row.created_at)!,
  livemode: livemodeOf(row.environment),
});

/** The recorded balance: the remaining credits of the open grants, as of the last event. */
export async function creditBalanceOf(sql: SqlExecutor, schema: string, tenant: Tenant, customerId: string) {
  const { rows } = await sql.query<{ balance: string }>(
    `SELECT balance FROM ${creditTables(schema).balances} WHERE customer_id = $1 AND organization = $2 AND environment = $3`,
    [customerId, tenant.organization, tenant.environment],
  );
  return Number(rows[0]?.balance ?? 0);
}

/**
 * What the customer can spend at `now`: the credits left on grants not expired by then, whether
 * or not their expiry is recorded yet. A read only, for paywall checks that must not write.
 */
export async function spendableCredits(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  customerId: string,
  now: Date,
) {
  const { rows } = await sql.query<{ balance: string | null }>(
    `SELECT sum(remaining) AS balance FROM ${creditTables(schema).grants}
     WHERE customer_id = $1 AND organization = $2 AND environment = $3 AND remaining > 0
       AND (expires_at IS NULL OR expires_at > $4)`,
    [customerId, tenant.organization, tenant.environment, now],
  );
  return Number(rows[0]?.balance ?? 0);
}

/** Grants with credits left and not expired at `now`, in burn order (docs/credits.md). */
export async function openGrants(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  customerId: string,
  now: Date,
): Promise<CreditGrant[]> {
  const { rows } = await sql.query<GrantRow>(
    `SELECT id, customer_id, environment, amount, remaining, source, source_id, reason, priority, expires_at, created_at
     FROM ${creditTables(schema).grants}
     WHERE customer_id = $1 AND organization = $2 AND environment = $3 AND remaining > 0
       AND (expires_at IS NULL OR expires_at > $4)
     ORDER BY expires_at ASC NULLS LAST, priority DESC, granted_version ASC`,
    [customerId, tenant.organization, tenant.environment, now],
  );
  return rows.map(grantResource);
}

/** Whether a grant of the customer is past its expiry and not yet recorded as expired. */
export async function hasExpiryDue(sql: SqlExecutor, schema: string, customerId: string, now: Date) {
  const { rows } = await sql.query(
    `SELECT 1 FROM ${creditTables(schema).grants}
     WHERE customer_id = $1 AND remaining > 0 AND expires_at <= $2 LIMIT 1`,
    [customerId, now],
  );
  return rows.length > 0;
}

const LEDGER_ORDER = [{ column: 'seq', type: 'integer' }] as const;

/** A page of the customer's ledger, newest first; `startingAfter` names an entry of this customer. */
export async function ledgerPage(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  customerId: string,
  page: { limit: number; startingAfter?: string },
): Promise<{ entries: CreditLedgerEntry[]; hasMore: boolean }> {
  const table = creditTables(schema).ledger;
  const where = { customer_id: customerId, organization: tenant.organization, environment: tenant.environment };
  let after: number[] | null = null;
  if (page.startingAfter !== undefined) {
    const { rows } = await sql.query<{ seq: number }>(
      `SELECT seq FROM ${table} WHERE id = $1 AND customer_id = $2 AND organization = $3 AND environment = $4`,
      [page.startingAfter, customerId, tenant.organization, tenant.environment],
    );
    if (!rows[0]) throw unknownCursor(page.startingAfter, 'ledger entry');
    after = [rows[0].seq];
  }
  const { rows, hasMore } = await keysetPage<EntryRow>(sql, {
    from: table,
    select: 'id, environment, type, amount, balance_after, grant_id, drawn_from, reason, metadata, created_at',
    where,
    order: LEDGER_ORDER,
    after,
    limit: page.limit,
  });
  return { entries: rows.map(entryResource), hasMore };
}
