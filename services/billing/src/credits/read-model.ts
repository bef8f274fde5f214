import type { CreditsSpentData } from '@billing/contracts';
import type { EventStore, RecordedEvent, SqlExecutor } from '@billing/eventstore';
import { type CreditsLedgerEvent, type CreditsSpent, creditsEvents, debtSettledBy, ledgerEntryOf } from './ledger';

// Written in the append's transaction (a client reads its own writes): one balance row per
// customer, one row per grant with what remains of it, and one ledger row per event.

export const creditTables = (schema: string) => ({
  balances: `${schema}.credit_balances`,
  grants: `${schema}.credit_grants`,
  ledger: `${schema}.credit_ledger`,
  spendKeys: `${schema}.credit_spend_keys`,
});

export async function migrateCreditsReadModel(store: EventStore): Promise<void> {
  const { schema } = store.tables;
  const t = creditTables(schema);
  await store.migrateSchema(`
    CREATE SCHEMA IF NOT EXISTS ${schema};
    CREATE TABLE IF NOT EXISTS ${t.balances} (
      customer_id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
      balance bigint NOT NULL,
      stream_version integer NOT NULL
    );
    CREATE TABLE IF NOT EXISTS ${t.grants} (
      id text PRIMARY KEY,
      customer_id text NOT NULL,
      organization text NOT NULL,
      environment text NOT NULL,
      amount bigint NOT NULL,
      remaining bigint NOT NULL,
      source text NOT NULL,
      source_id text,
      reason text,
      priority integer NOT NULL,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      -- Grant order (the older grant burns first among equals); stream_version moves on with each draw.
      granted_version integer NOT NULL,
      stream_version integer NOT NULL
    );
    CREATE INDEX IF NOT EXISTS credit_grants_open ON ${t.grants} (customer_id) WHERE remaining > 0;
    -- The sweep's question: open grants past their expiry.
    CREATE INDEX IF NOT EXISTS credit_grants_expiring ON ${t.grants} (expires_at)
      WHERE remaining > 0 AND expires_at IS NOT NULL;
    CREATE TABLE IF NOT EXISTS ${t.ledger} (
      id text PRIMARY KEY,
      customer_id text NOT NULL,
      organization text NOT NULL,
      environment text NOT NULL,
      seq integer NOT NULL,
      type text NOT NULL,
      amount bigint NOT NULL,
      balance_after bigint NOT NULL,
      grant_id text,
      drawn_from jsonb NOT NULL,
      reason text,
      metadata jsonb,
      created_at timestamptz NOT NULL
    );
    -- A customer's ledger newest first, paged by the stream version of each entry.
    CREATE UNIQUE INDEX IF NOT EXISTS credit_ledger_by_customer ON ${t.ledger} (customer_id, seq DESC);
  `);
  await migrateSpendKeys(store);
}

/**
 * Every spend's idempotency key, for ever (docs/credits.md, Idempotency): what a repeat answers.
 * The primary key refuses a second spend with a key, so a repeat that raced past the check
 * rolls its append back. Made once, from the spends already recorded: their keys lived in the
 * ledger's state before.
 */
async function migrateSpendKeys(store: EventStore): Promise<void> {
  const { spendKeys } = creditTables(store.tables.schema);
  const literal = spendKeys.replaceAll("'", "''");
  await store.migrateSchema(`
    DO $$ BEGIN
      IF to_regclass('${literal}') IS NULL THEN
        CREATE TABLE ${spendKeys} (
          customer_id text NOT NULL,
          idempotency_key text NOT NULL,
          spend_id text NOT NULL,
          amount bigint NOT NULL,
          metadata jsonb,
          balance_after bigint NOT NULL,
          spent_at timestamptz NOT NULL,
          PRIMARY KEY (customer_id, idempotency_key)
        );
        INSERT INTO ${spendKeys} (customer_id, idempotency_key, spend_id, amount, metadata, balance_after, spent_at)
          SELECT data->>'customer_id', data->>'idempotency_key', data->>'spend_id', (data->>'amount')::bigint,
                 CASE WHEN jsonb_typeof(data->'metadata') = 'object' THEN data->'metadata' END,
                 (data->>'balance_after')::bigint, (data->>'spent_at')::timestamptz
          FROM ${store.tables.events}
          WHERE stream_id LIKE 'customer\\_credits-%' AND type = 'CreditsSpent'
          ORDER BY global_position
          ON CONFLICT DO NOTHING;
      END IF;
    END $$;
  `);
}

/**
 * Applies credit events; each row is guarded by the stream version it was written at, so an
 * event applied already changes nothing when replayed. Spends that follow one another (a batch
 * of them: `SpendBatches`) are written together, four statements for the run.
 */
export async function projectCredits(sql: SqlExecutor, schema: string, events: RecordedEvent[]): Promise<void> {
  const t = creditTables(schema);
  let spends: Array<{ recorded: RecordedEvent; data: CreditsSpentData }> = [];
  for (const recorded of events) {
    const event = creditsEvents.of(recorded);
    if (!event || event.type === 'CreditsLowBalance') continue;
    if (event.type === 'CreditsSpent') {
      spends.push({ recorded, data: event.data });
      continue;
    }
    await projectSpends(sql, t, spends);
    spends = [];
    await projectEntry(sql, t, event, recorded);
  }
  await projectSpends(sql, t, spends);
}

/** A ledger event other than a spend (spends are written in runs: `projectSpends`). */
type OneByOne = Exclude<CreditsLedgerEvent, CreditsSpent>;

/** One ledger event's rows: its grant, its balance and its ledger entry. */
async function projectEntry(
  sql: SqlExecutor,
  t: ReturnType<typeof creditTables>,
  event: OneByOne,
  recorded: RecordedEvent,
): Promise<void> {
  await writeGrants(sql, t.grants, event, recorded, recorded.stream_version);
  await writeBalances(sql, t.balances, [{ recorded, data: event.data }]);
  await writeLedgerRows(sql, t.ledger, [ledgerRowOf(event, recorded)]);
}

const LEDGER_ROW_COLUMNS = `id text, customer_id text, organization text, environment text, seq integer, type text,
  amount bigint, balance_after bigint, grant_id text, drawn_from jsonb, reason text, metadata jsonb,
  created_at timestamptz`;

/** The `credit_ledger` row of an event, its columns in table order. */
function ledgerRowOf(event: CreditsLedgerEvent, recorded: RecordedEvent) {
  const entry = ledgerEntryOf(event);
  return {
    id: entry.id,
    customer_id: event.data.customer_id,
    organization: recorded.organization,
    environment: recorded.environment,
    seq: recorded.stream_version,
    type: entry.type,
    amount: entry.amount,
    balance_after: event.data.balance_after,
    grant_id: entry.grant_id,
    drawn_from: 'drawn_from' in event.data ? event.data.drawn_from : [],
    reason: 'reason' in event.data ? event.data.reason : null,
    metadata: 'metadata' in event.data ? event.data.metadata : null,
    created_at: entry.at,
  };
}

/**
 * Spends in a row, of one ledger or several: their ledger entries, keys, draws on grants (each
 * grant's summed, only draws newer than the row) and each customer's last balance, in one
 * statement each.
 */
async function projectSpends(
  sql: SqlExecutor,
  t: ReturnType<typeof creditTables>,
  spends: Array<{ recorded: RecordedEvent; data: CreditsSpentData }>,
): Promise<void> {
  if (spends.length === 0) return;
  const rows = spends.map(({ recorded, data }) => ledgerRowOf({ type: 'CreditsSpent', data }, recorded));
  await writeLedgerRows(sql, t.ledger, rows);
  await writeSpendKeys(
    sql,
    t.spendKeys,
    spends.map(({ data }) => data),
  );
  await writeDraws(sql, t.grants, spends);
  await writeBalances(sql, t.balances, spends);
}

/** Each customer's balance after the last of its `changes` (in stream order), unless a later one is there. */
async function writeBalances(
  sql: SqlExecutor,
  table: string,
  changes: Array<{ recorded: RecordedEvent; data: { customer_id: string; balance_after: number } }>,
): Promise<void> {
  const last = new Map(changes.map((change) => [change.data.customer_id, change]));
  const balances = [...last.values()].map(({ recorded, data }) => ({
    customer_id: data.customer_id,
    organization: recorded.organization,
    environment: recorded.environment,
    balance: data.balance_after,
    stream_version: recorded.stream_version,
  }));
  await sql.write(
    `INSERT INTO ${table} (customer_id, organization, environment, balance, stream_version)
     SELECT r.* FROM jsonb_to_recordset($1::jsonb)
       AS r(customer_id text, organization text, environment text, balance bigint, stream_version integer)
     ON CONFLICT (customer_id) DO UPDATE SET balance = EXCLUDED.balance, stream_version = EXCLUDED.stream_version
     WHERE ${table}.stream_version < EXCLUDED.stream_version`,
    [JSON.stringify(balances)],
  );
}

/** What spends and take-backs drew from each grant, summed per grant; only draws newer than the grant's row. */
async function writeDraws(
  sql: SqlExecutor,
  table: string,
  changes: Array<{ recorded: RecordedEvent; data: { drawn_from: Array<{ grant_id: string; amount: number }> } }>,
): Promise<void> {
  const draws = changes.flatMap(({ recorded, data }) =>
    data.drawn_from.map((draw) => ({ id: draw.grant_id, amount: draw.amount, version: recorded.stream_version })),
  );
  if (draws.length === 0) return;
  await sql.write(
    `UPDATE ${table} g SET remaining = g.remaining - d.amount, stream_version = d.version
     FROM (SELECT r.id, sum(r.amount) AS amount, max(r.version) AS version
           FROM jsonb_to_recordset($1::jsonb) AS r(id text, amount bigint, version integer)
           JOIN ${table} now ON now.id = r.id AND r.version > now.stream_version
           GROUP BY r.id) d
     WHERE g.id = d.id`,
    [JSON.stringify(draws)],
  );
}

async function writeLedgerRows(sql: SqlExecutor, table: string, rows: ReturnType<typeof ledgerRowOf>[]): Promise<void> {
  await sql.write(
    `INSERT INTO ${table} (id, customer_id, organization, environment, seq, type, amount, balance_after,
       grant_id, drawn_from, reason, metadata, created_at)
     SELECT r.* FROM jsonb_to_recordset($1::jsonb) AS r(${LEDGER_ROW_COLUMNS}) ON CONFLICT (id) DO NOTHING`,
    [JSON.stringify(rows)],
  );
}

/**
 * The keys of spends. The same spend again writes nothing; another spend with a key already
 * taken fails on the primary key (23505), which `SpendBatches` answers with the first spend. The
 * key's row is looked up by a subquery, not `NOT EXISTS`: that is planned as an anti-join, which
 * a prepared statement planned while the table was small keeps as a scan of every key.
 */
async function writeSpendKeys(sql: SqlExecutor, table: string, spends: CreditsSpentData[]): Promise<void> {
  const rows = spends.map((d) => ({
    customer_id: d.customer_id,
    idempotency_key: d.idempotency_key,
    spend_id: d.spend_id,
    amount: d.amount,
    metadata: d.metadata,
    balance_after: d.balance_after,
    spent_at: d.spent_at,
  }));
  await sql.write(spendKeysInsert(table), [JSON.stringify(rows)]);
}

/** `writeSpendKeys`'s statement, `$1` the rows (for the test of the plan it keeps). */
export const spendKeysInsert = (table: string): string =>
  `INSERT INTO ${table} (customer_id, idempotency_key, spend_id, amount, metadata, balance_after, spent_at)
   SELECT r.* FROM jsonb_to_recordset($1::jsonb) AS r(customer_id text, idempotency_key text, spend_id text,
     amount bigint, metadata jsonb, balance_after bigint, spent_at timestamptz)
   WHERE (SELECT k.spend_id FROM ${table} k WHERE k.customer_id = r.customer_id AND k.idempotency_key = r.idempotency_key)
     IS DISTINCT FROM r.spend_id`;

async function writeGrants(
  sql: SqlExecutor,
  table: string,
  event: OneByOne,
  recorded: RecordedEvent,
  version: number,
): Promise<void> {
  switch (event.type) {
    case 'CreditsGranted': {
      const d = event.data;
      await sql.write(
        `INSERT INTO ${table} (id, customer_id, organization, environment, amount, remaining, source, source_id,
           reason, priority, expires_at, created_at, granted_version, stream_version)
         VALUES ($1, $2, $3, $4, $5, $13, $6, $7, $8, $9, $10, $11, $12, $12) ON CONFLICT (id) DO NOTHING`,
        [
          d.grant_id,
          d.customer_id,
          recorded.organization,
          recorded.environment,
          d.amount,
          d.source,
          d.source_id,
          d.reason,
          d.priority,
          d.expires_at,
          d.granted_at,
          version,
          // A grant made while the balance is below zero repays that first.
          d.amount - debtSettledBy(d),
        ],
      );
      return;
    }
    case 'CreditsAdjusted':
      await writeDraws(sql, table, [{ recorded, data: event.data }]);
      return;
    case 'CreditsExpired':
      await sql.write(`UPDATE ${table} SET remaining = 0, stream_version = $2 WHERE id = $1 AND stream_version < $2`, [
        event.data.grant_id,
        version,
      ]);
      return;
  }
}
