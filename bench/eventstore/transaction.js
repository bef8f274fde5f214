'use strict';
// The cost of a read-model transaction like a command's (one read, two upserts) when the upserts
// are `query` (each awaited: a round trip each) or `write` (sent with the COMMIT: decision 0024),
// the two sides alternating in rounds on one connection. Prints one JSON object; see README.md.
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { postgresDatabase } = require('@billing/eventstore');
const { positiveSetting, setting } = require('../settings');

function readParameters() {
  return {
    databaseUrl: setting('database-url', 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
    rounds: positiveSetting('rounds', 'BENCH_ROUNDS', '6'),
    transactionsPerRound: positiveSetting('transactions', 'BENCH_TRANSACTIONS', '500'),
  };
}

const redact = (url) => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
const round = (n, digits) => Number(n.toFixed(digits));

/** `count` transactions; `upsert` is how each of the two upserts is sent. Wall time and this process's CPU. */
async function timeTransactions(database, table, count, how) {
  const upsert = `INSERT INTO ${table} (id, n) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET n = EXCLUDED.n`;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < count; i++) {
    await database.transaction(async (tx) => {
      await tx.query(`SELECT n FROM ${table} WHERE id = $1`, [`read-${i % 100}`]);
      await tx[how](upsert, [`a-${i % 100}`, i]);
      await tx[how](upsert, [`b-${i % 100}`, i]);
    });
  }
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - started, cpuUs: used.user + used.system, count };
}

function summary(runs) {
  const count = runs.reduce((sum, run) => sum + run.count, 0);
  const ms = runs.reduce((sum, run) => sum + run.ms, 0);
  const cpuUs = runs.reduce((sum, run) => sum + run.cpuUs, 0);
  return {
    transactions: count,
    ms_per_transaction: round(ms / count, 3),
    client_cpu_us_per_transaction: round(cpuUs / count, 0),
  };
}

/**
 * Whether the upserts were written (the pipelined ones too): both rows of each of the last round's
 * ids, the newest value last. Null when they were, else why not.
 */
async function checkWrites(database, table, transactionsPerRound) {
  const last = transactionsPerRound - 1;
  const { rows } = await database.query(
    `SELECT count(*)::int AS rows, (SELECT n FROM ${table} WHERE id = $1) AS a, (SELECT n FROM ${table} WHERE id = $2) AS b
     FROM ${table}`,
    [`a-${last % 100}`, `b-${last % 100}`],
  );
  const expected = 2 * Math.min(100, transactionsPerRound);
  const { rows: count, a, b } = rows[0];
  if (count !== expected) return `${count} rows written, ${expected} expected`;
  if (a !== last || b !== last) return `the last transaction's upserts hold ${a} and ${b}, ${last} expected`;
  return null;
}

async function main() {
  const params = readParameters();
  const schema = `bench_transaction_${process.pid}_${Date.now()}`;
  const database = postgresDatabase({ connectionString: params.databaseUrl, max: 1 });
  const table = `"${schema}".rows`;
  try {
    await database.exec(`CREATE SCHEMA "${schema}"; CREATE TABLE ${table} (id text PRIMARY KEY, n int NOT NULL)`);
    await timeTransactions(database, table, 200, 'query');
    await timeTransactions(database, table, 200, 'write');
    const awaited = [];
    const pipelined = [];
    for (let r = 0; r < params.rounds; r++) {
      const sides = [
        [awaited, 'query'],
        [pipelined, 'write'],
      ];
      if (r % 2 === 1) sides.reverse();
      for (const [runs, how] of sides)
        runs.push(await timeTransactions(database, table, params.transactionsPerRound, how));
    }
    const queries = summary(awaited);
    const writes = summary(pipelined);
    const invalidBecause = await checkWrites(database, table, params.transactionsPerRound);
    return {
      benchmark: 'eventstore-transaction-writes',
      valid: invalidBecause === null,
      invalid_because: invalidBecause,
      started_at: new Date().toISOString(),
      node_version: process.version,
      cpu_count: os.cpus().length,
      load_average: os.loadavg().map((n) => round(n, 2)),
      parameters: { ...params, databaseUrl: redact(params.databaseUrl), schema },
      upserts_as_query: queries,
      upserts_as_write: writes,
      write_over_query: {
        time: round(writes.ms_per_transaction / queries.ms_per_transaction, 2),
        client_cpu: round(writes.client_cpu_us_per_transaction / queries.client_cpu_us_per_transaction, 2),
      },
    };
  } finally {
    await database.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch((error) => {
      console.error(`transaction benchmark: could not drop schema ${schema}:`, error);
      process.exitCode = 1;
    });
    await database.close();
  }
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
  (error) => {
    console.error('transaction benchmark failed:', error);
    process.exitCode = 1;
  },
);
