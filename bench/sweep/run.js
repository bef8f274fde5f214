'use strict';
// The billing sweep's invoice queries as a merchant grows: every 30 s the sweep asks for the
// open invoices of PAST_DUE subscriptions due a retry (`findDueRetries`) and of CANCELED ones due
// a final invoice's charge (`findDueFinalInvoices`). Billing's own tables and indexes (its
// migrations, in a schema of their own), grown by SQL to `--subscriptions` (half canceled), each
// with `--invoices-each` paid invoices, and `--open` open ones that are due; then each query is
// timed `--rounds` times. Prints JSON. Needs PostgreSQL (DATABASE_URL) and the built dist/.
const { randomBytes } = require('node:crypto');
const { performance } = require('node:perf_hooks');
const { EventStore, postgresDatabase } = require('@billing/eventstore');
const {
  migrateInvoicesReadModel,
  findDueFinalInvoices,
  findDueRetries,
} = require('../../services/billing/dist/invoices/read-model');
const { finalInvoiceId } = require('../../services/billing/dist/invoices/ids');
const { migrateSubscriptionsReadModel } = require('../../services/billing/dist/subscriptions/read-model');
const { positiveSetting } = require('../settings');
const { machine } = require('../platform');

const SUBSCRIPTIONS = positiveSetting('subscriptions', 'BENCH_SWEEP_SUBSCRIPTIONS', '20000');
const INVOICES_EACH = positiveSetting('invoices-each', 'BENCH_SWEEP_INVOICES_EACH', '12');
const OPEN = positiveSetting('open', 'BENCH_SWEEP_OPEN', '100');
const ROUNDS = positiveSetting('rounds', 'BENCH_SWEEP_ROUNDS', '20');

/** Subscriptions with a padded document (a real one is about 1 kB); every other one canceled. */
const growSubscriptions = (t) => `
  INSERT INTO ${t} (id, organization, environment, customer_id, product_id, status, created_at, stream_version, document, period_end)
  SELECT 'sub_' || g, 'org_' || (g % 50), 'SANDBOX', 'cus_' || g, 'prod_1',
         CASE WHEN g % 2 = 0 THEN 'CANCELED' ELSE 'ACTIVE' END, now(), 1,
         jsonb_build_object('id', 'sub_' || g, 'current_period_end', '2026-03-01T00:00:00.000Z', 'pad', repeat('x', 900)),
         '2026-03-01T00:00:00Z'
  FROM generate_series(1, $1::int) g`;

/** Paid invoices of every subscription (about 1 kB each). */
const growInvoices = (t) => `
  INSERT INTO ${t} (id, organization, environment, customer_id, subscription_id, status, created_at, stream_version, document)
  SELECT 'in_' || g || '_' || k, 'org_' || (g % 50), 'SANDBOX', 'cus_' || g, 'sub_' || g, 'paid', now(), 1,
         jsonb_build_object('period_end', '2026-02-01T00:00:00.000Z', 'next_payment_attempt', null, 'pad', repeat('y', 900))
  FROM generate_series(1, $1::int) g, generate_series(1, $2::int) k`;

/** One paid invoice of a canceled subscription made its open final invoice, due. */
const openFinal = (t) => `
  UPDATE ${t} SET id = $2, status = 'open', document = document ||
    '{"next_payment_attempt": "2026-02-01T00:00:00.000Z", "period_end": "2026-03-01T00:00:00.000Z"}'
  WHERE id = $1`;

async function timed(rounds, run) {
  const ms = [];
  for (let i = 0; i < rounds; i++) {
    const start = performance.now();
    await run();
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  const at = (q) => Math.round(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] * 100) / 100;
  return { p50_ms: at(0.5), p90_ms: at(0.9), max_ms: at(1) };
}

async function main() {
  if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL (PostgreSQL) is required');
  const schema = `bench_sweep_${randomBytes(4).toString('hex')}`;
  const database = postgresDatabase({ connectionString: process.env.DATABASE_URL, max: 2 });
  const store = new EventStore(database, { schema });
  try {
    await store.migrate();
    await migrateSubscriptionsReadModel(store);
    await migrateInvoicesReadModel(store);
    const grown = performance.now();
    await database.query(growSubscriptions(`${schema}.subscriptions`), [SUBSCRIPTIONS]);
    await database.query(growInvoices(`${schema}.invoices`), [SUBSCRIPTIONS, INVOICES_EACH]);
    const open = Math.min(OPEN, Math.floor(SUBSCRIPTIONS / 2));
    for (let g = 1; g <= open; g++) {
      await database.query(openFinal(`${schema}.invoices`), [`in_${2 * g}_1`, finalInvoiceId(`sub_${2 * g}`)]);
    }
    await database.query(`ANALYZE ${schema}.subscriptions`);
    await database.query(`ANALYZE ${schema}.invoices`);
    const growSeconds = Math.round((performance.now() - grown) / 100) / 10;
    const now = new Date('2026-02-02T00:00:00Z');
    let found = 0;
    const finalInvoices = await timed(ROUNDS, async () => {
      found = (await findDueFinalInvoices(database, schema, now, null)).length;
    });
    const retries = await timed(ROUNDS, () => findDueRetries(database, schema, now, null));
    const result = {
      benchmark: 'sweep',
      database: 'postgresql',
      subscriptions: SUBSCRIPTIONS,
      invoices: SUBSCRIPTIONS * INVOICES_EACH,
      open_invoices: open,
      grow_seconds: growSeconds,
      rounds: ROUNDS,
      find_due_final_invoices: { ...finalInvoices, found },
      find_due_retries: retries,
      valid: found === open,
      machine: machine(),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    if (!result.valid) process.exitCode = 1;
  } finally {
    await database.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    await database.close();
  }
}

main().catch((error) => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
