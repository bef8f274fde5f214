'use strict';
// Appends per second through the event store's PostgreSQL adapter, beside raw single-row INSERTs
// on the same database in the same run. Prints one JSON object to stdout; see README.md.
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { Pool } = require('pg');
const { EventStore, eventStoreDdl, newEventId, postgresDatabase } = require('@billing/eventstore');
const { positiveSetting, setting } = require('../settings');

const PAYLOAD = { plan: 'plan_bench', amount: 1999, currency: 'EUR', note: 'benchmark event' };

function readParameters() {
  const ops = positiveSetting('ops', 'BENCH_OPS', '2000');
  return {
    databaseUrl: setting('database-url', 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
    ops,
    concurrency: positiveSetting('concurrency', 'BENCH_CONCURRENCY', '8'),
    warmupOps: positiveSetting('warmup', 'BENCH_WARMUP', String(Math.min(200, ops))),
    rounds: positiveSetting('rounds', 'BENCH_ROUNDS', '4'),
    batchSize: positiveSetting('batch-size', 'BENCH_BATCH_SIZE', '100'),
    batchRounds: positiveSetting('batch-rounds', 'BENCH_BATCH_ROUNDS', '10'),
    batchesPerRound: positiveSetting('batches', 'BENCH_BATCHES', '20'),
  };
}

const redact = (url) => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
const round = (n, digits) => Number(n.toFixed(digits));

/**
 * Ctrl-C, SIGTERM or an uncaught error (e.g. an 'error' event of a pg client whose connection
 * died) stop every writer at its next operation, so the normal `finally` drops the schema.
 */
let stopReason;
function requestStop(reason) {
  console.error('eventstore benchmark: stopping:', reason);
  stopReason ??= reason instanceof Error ? reason : new Error(`interrupted by ${reason}`);
  process.exitCode = 1;
}
function throwIfStopped() {
  if (stopReason) throw stopReason;
}

/** One writer appending `count` events to one stream, one at a time, with the right expected version. */
async function appendLoop(store, stream, count) {
  let version = 0;
  for (let i = 0; i < count; i++) {
    throwIfStopped();
    const options = { expectedVersion: version, organization: 'org_bench', environment: 'SANDBOX' };
    const event = { type: 'BenchEvent', data: PAYLOAD };
    ({ nextExpectedVersion: version } = await store.append(stream, [event], { ...options, occurredAt: new Date() }));
  }
}

/**
 * One connection running `count` single-row INSERTs, each its own autocommitted transaction, as
 * a named prepared statement (the adapter prepares its append too).
 */
async function insertLoop(pool, table, stream, count) {
  const client = await pool.connect();
  try {
    const text = `INSERT INTO ${table} (stream_id, version, payload, occurred_at) VALUES ($1, $2, $3, $4)`;
    for (let i = 1; i <= count; i++) {
      throwIfStopped();
      await client.query({ name: 'raw_single', text, values: [stream, i, PAYLOAD, new Date()] });
    }
  } finally {
    client.release();
  }
}

/** `total` operations split over `writers` as evenly as possible. */
const shares = (total, writers) =>
  Array.from({ length: writers }, (_, i) => Math.floor((total + writers - 1 - i) / writers));

/** Runs `loop(stream, count)` for every writer in parallel and times the lot. */
async function measure(label, writers, total, loop) {
  const started = performance.now();
  // allSettled: every writer has stopped before a failure reaches the cleanup.
  const outcomes = await Promise.allSettled(shares(total, writers).map((n, w) => loop(`bench-${label}-${w}`, n)));
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
  const seconds = (performance.now() - started) / 1000;
  return { operations: total, seconds: round(seconds, 3), ops_per_sec: round(total / seconds, 1) };
}

/**
 * A warm-up of both sides on throwaway streams (reported, not counted), then `rounds` rounds in
 * which the adapter and the raw INSERTs take turns with `ops / rounds` operations each (the side
 * that goes first alternates), so both meet the same load on this shared machine.
 */
async function scenario(name, writers, ctx) {
  const adapter = (stream, count) => appendLoop(ctx.store, stream, count);
  const raw = (stream, count) => insertLoop(ctx.rawPool, ctx.rawTable, stream, count);
  const { ops, rounds, warmupOps } = ctx.params;
  const warmup = {
    adapter: await measure(`${name}-warmup-adapter`, writers, warmupOps, adapter),
    raw: await measure(`${name}-warmup-raw`, writers, warmupOps, raw),
  };
  const totals = { adapter: { operations: 0, seconds: 0 }, raw: { operations: 0, seconds: 0 } };
  const roundRatios = [];
  for (let r = 0; r < rounds; r++) {
    const count = shares(ops, rounds)[r];
    const sides = r % 2 === 0 ? ['adapter', 'raw'] : ['raw', 'adapter'];
    const results = {};
    for (const side of sides) {
      results[side] = await measure(`${name}-${side}-${r}`, writers, count, side === 'adapter' ? adapter : raw);
      totals[side].operations += results[side].operations;
      totals[side].seconds += results[side].seconds;
    }
    roundRatios.push(round(results.adapter.ops_per_sec / results.raw.ops_per_sec, 3));
  }
  const summary = ({ operations, seconds }) => ({
    operations,
    seconds: round(seconds, 3),
    ops_per_sec: round(operations / seconds, 1),
  });
  const adapterResult = summary(totals.adapter);
  const rawResult = summary(totals.raw);
  const ratio = round(adapterResult.ops_per_sec / rawResult.ops_per_sec, 3);
  return {
    writers,
    operations: ops,
    rounds,
    warmup,
    adapter: adapterResult,
    raw: rawResult,
    ratio,
    round_ratios: roundRatios,
  };
}

/** `count` appends of `size` events each to one stream, each with the right expected version. */
async function appendBatches(store, stream, size, count, state) {
  const events = Array.from({ length: size }, () => ({ type: 'BenchEvent', data: PAYLOAD }));
  for (let i = 0; i < count; i++) {
    throwIfStopped();
    const options = { expectedVersion: state.version, organization: 'org_bench', environment: 'SANDBOX' };
    ({ nextExpectedVersion: state.version } = await store.append(stream, events, {
      ...options,
      occurredAt: new Date(),
    }));
  }
}

/** `count` multi-row INSERTs (one VALUES list of `size` rows, a named prepared statement) on one connection. */
async function insertBatches(client, table, stream, size, count, state) {
  const values = Array.from({ length: size }, (_, r) => `($1, $${r * 2 + 3}, $${r * 2 + 4}, $2)`).join(', ');
  const text = `INSERT INTO ${table} (stream_id, version, payload, occurred_at) VALUES ${values}`;
  for (let i = 0; i < count; i++) {
    throwIfStopped();
    const params = [stream, new Date()];
    for (let r = 0; r < size; r++) params.push(++state.version, PAYLOAD);
    await client.query({ name: `raw_batch_${size}`, text, values: params });
  }
}

/**
 * `count` multi-row INSERTs into a table of the event store's shape and indexes (event id, stream
 * and version, log order) and ids of the same kind (time-ordered): what any
 * store of these events pays for its indexes, without the adapter's version check, JSON input
 * and returned positions.
 */
async function insertIndexedBatches(client, table, stream, size, count, state) {
  const values = Array.from(
    { length: size },
    (_, r) => `($${r * 3 + 6}, $1, $${r * 3 + 7}, $2, 1, $${r * 3 + 8}, $3, $4, $5)`,
  ).join(', ');
  const text = `INSERT INTO ${table} (event_id, stream_id, stream_version, type, schema_version, data, organization,
    environment, occurred_at) VALUES ${values}`;
  for (let i = 0; i < count; i++) {
    throwIfStopped();
    const params = [stream, 'BenchEvent', 'org_bench', 'SANDBOX', new Date()];
    for (let r = 0; r < size; r++) params.push(newEventId(), ++state.version, PAYLOAD);
    await client.query({ name: `raw_indexed_batch_${size}`, text, values: params });
  }
}

/**
 * Batches of `batchSize` events, one writer: the adapter's append and a raw multi-row INSERT
 * take turns in rounds (the side that goes first alternates), so both meet the same load on
 * this shared machine. The first round of each side is a warm-up, reported but not counted.
 */
async function batchScenario(ctx) {
  const { batchSize: size, batchRounds: rounds, batchesPerRound: count } = ctx.params;
  const client = await ctx.rawPool.connect();
  const states = { adapter: { version: 0 }, raw: { version: 0 }, raw_indexed: { version: 0 } };
  const seconds = { adapter: 0, raw: 0, raw_indexed: 0 };
  const warmup = {};
  const runs = {
    adapter: () => appendBatches(ctx.store, 'bench-batch-adapter', size, count, states.adapter),
    raw: () => insertBatches(client, ctx.rawTable, 'bench-batch-raw', size, count, states.raw),
    raw_indexed: () =>
      insertIndexedBatches(client, ctx.indexedTable, 'bench-batch-raw-indexed', size, count, states.raw_indexed),
  };
  const sides = Object.keys(runs);
  try {
    for (let round = 0; round <= rounds; round++) {
      // Each round another side goes first.
      for (let i = 0; i < sides.length; i++) {
        const side = sides[(i + round) % sides.length];
        const started = performance.now();
        await runs[side]();
        const elapsed = (performance.now() - started) / 1000;
        if (round === 0) warmup[side] = round3(elapsed);
        else seconds[side] += elapsed;
      }
    }
  } finally {
    client.release();
  }
  const events = size * count * rounds;
  const side = (s) => ({
    batches: count * rounds,
    events,
    seconds: round3(seconds[s]),
    events_per_sec: round(events / seconds[s], 1),
  });
  const adapterResult = side('adapter');
  const rawResult = side('raw');
  const indexedResult = side('raw_indexed');
  return {
    batch_size: size,
    rounds,
    batches_per_round: count,
    warmup_seconds: warmup,
    adapter: adapterResult,
    raw: rawResult,
    raw_indexed: indexedResult,
    // The baseline: a plain table with one index.
    ratio: round(adapterResult.events_per_sec / rawResult.events_per_sec, 3),
    // The same rows into the event store's own table and indexes: the adapter's own cost.
    ratio_over_raw_indexed: round(adapterResult.events_per_sec / indexedResult.events_per_sec, 3),
    raw_indexed_over_raw: round(indexedResult.events_per_sec / rawResult.events_per_sec, 3),
    valid: Object.values(states).every((state) => state.version === size * count * (rounds + 1)),
  };
}
const round3 = (n) => round(n, 3);

async function createRawTable(pool, schema) {
  const table = `"${schema}".raw_events`;
  await pool.query(`CREATE TABLE ${table} (id bigserial PRIMARY KEY, stream_id text NOT NULL,
    version integer NOT NULL, payload jsonb NOT NULL, occurred_at timestamptz NOT NULL)`);
  return table;
}

/**
 * The event store's own events table, built by eventStoreDdl in a schema of its own (so its
 * columns and indexes can never drift from the store's), written to with raw INSERTs.
 */
async function createIndexedRawTable(pool, schema) {
  await pool.query(eventStoreDdl(`${schema}_raw`));
  return `"${schema}_raw".events`;
}

async function serverInfo(pool) {
  const { rows } = await pool.query(`SELECT current_setting('server_version') AS version,
    current_setting('synchronous_commit') AS synchronous_commit, current_setting('fsync') AS fsync`);
  return rows[0];
}

/** Reports its own failure without hiding the error that got us here. */
async function dropSchema(pool, schema) {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch((error) => {
    console.error(`eventstore benchmark: could not drop schema ${schema}:`, error);
    process.exitCode = 1;
  });
}

async function main() {
  const startedAt = new Date().toISOString();
  const params = readParameters();
  const schema = `bench_eventstore_${process.pid}_${Date.now()}`;
  const database = postgresDatabase({ connectionString: params.databaseUrl, max: params.concurrency });
  const rawPool = new Pool({ connectionString: params.databaseUrl, max: params.concurrency });
  let schemaMayExist = false;
  try {
    const server = await serverInfo(rawPool);
    const store = new EventStore(database, { schema });
    schemaMayExist = true;
    await store.migrate();
    const ctx = {
      params,
      store,
      rawPool,
      rawTable: await createRawTable(rawPool, schema),
      indexedTable: await createIndexedRawTable(rawPool, schema),
    };
    const single = await scenario('single', 1, ctx);
    const concurrent = await scenario('concurrent', params.concurrency, ctx);
    const batch = await batchScenario(ctx);
    return {
      benchmark: 'eventstore-append-vs-raw-insert',
      started_at: startedAt,
      postgres_server_version: server.version,
      postgres_durability: { synchronous_commit: server.synchronous_commit, fsync: server.fsync },
      node_version: process.version,
      cpu_count: os.cpus().length,
      cpu_model: os.cpus()[0]?.model,
      parameters: { ...params, databaseUrl: redact(params.databaseUrl), schema },
      scenarios: { single_stream: single, concurrent_streams: concurrent, batch },
      ratios: {
        single_stream: single.ratio,
        concurrent_streams: concurrent.ratio,
        batch: batch.ratio,
        batch_over_raw_indexed: batch.ratio_over_raw_indexed,
      },
      valid: batch.valid,
    };
  } finally {
    if (schemaMayExist) {
      await dropSchema(rawPool, schema);
      await dropSchema(rawPool, `${schema}_raw`);
    }
    await Promise.allSettled([rawPool.end(), database.close()]);
  }
}

process.once('SIGINT', requestStop).once('SIGTERM', requestStop).on('uncaughtException', requestStop);
main().then(
  (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
  (error) => {
    console.error('eventstore benchmark failed:', error);
    process.exitCode = 1;
  },
);
