'use strict';
// The cost of one command (handleCommand: read, fold, decide, append) on a stream that already
// holds BENCH_STREAM_EVENTS events, with and without a snapshot, the two sides alternating in
// rounds on the same database in the same run. Prints one JSON object to stdout; see README.md.
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { EventStore, handleCommand, postgresDatabase } = require('@billing/eventstore');
const { positiveSetting, setting } = require('../settings');

function readParameters() {
  return {
    databaseUrl: setting('database-url', 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
    streamEvents: positiveSetting('stream-events', 'BENCH_STREAM_EVENTS', '10000'),
    rounds: positiveSetting('rounds', 'BENCH_ROUNDS', '10'),
    commandsPerRound: positiveSetting('commands', 'BENCH_COMMANDS', '5'),
    warmupCommands: positiveSetting('warmup', 'BENCH_WARMUP', '3'),
  };
}

const redact = (url) => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
const round = (n, digits) => Number(n.toFixed(digits));
const appendOptions = () => ({ organization: 'org_bench', environment: 'SANDBOX', occurredAt: new Date() });

/** A small state (a count and a sum), so the figures are the reading, not the folding. */
const counted = {
  initialState: () => ({ count: 0, total: 0 }),
  evolve: (state, e) => ({ count: state.count + 1, total: state.total + e.data.amount }),
  decide: (n) => [{ type: 'Counted', data: { amount: n } }],
};
const withSnapshots = { ...counted, snapshotVersion: 1 };

/** `count` events in one stream, appended in batches of 500. */
async function fill(store, stream, count) {
  for (let version = 0; version < count;) {
    const size = Math.min(500, count - version);
    const events = Array.from({ length: size }, (_, i) => ({ type: 'Counted', data: { amount: version + i } }));
    ({ nextExpectedVersion: version } = await store.append(stream, events, {
      ...appendOptions(),
      expectedVersion: version,
    }));
  }
}

async function timeCommands(store, stream, aggregate, count) {
  const durations = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await handleCommand(store, stream, aggregate, i, appendOptions());
    durations.push(performance.now() - started);
  }
  return durations;
}

function summary(durations) {
  const sorted = [...durations].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    commands: sorted.length,
    p50_ms: round(at(0.5), 2),
    p90_ms: round(at(0.9), 2),
    max_ms: round(sorted.at(-1), 2),
  };
}

async function main() {
  const params = readParameters();
  const schema = `bench_command_${process.pid}_${Date.now()}`;
  const database = postgresDatabase({ connectionString: params.databaseUrl, max: 2 });
  const store = new EventStore(database, { schema });
  try {
    await store.migrate();
    await fill(store, 'full-1', params.streamEvents);
    await fill(store, 'snap-1', params.streamEvents);
    // Warm-up (excluded): plans, and the first command on the snapshot side writes the snapshot.
    const warmupFull = await timeCommands(store, 'full-1', counted, params.warmupCommands);
    const warmupSnapshot = await timeCommands(store, 'snap-1', withSnapshots, params.warmupCommands);
    const full = [];
    const snapshot = [];
    for (let r = 0; r < params.rounds; r++) {
      const first = r % 2 === 0;
      if (first) full.push(...(await timeCommands(store, 'full-1', counted, params.commandsPerRound)));
      snapshot.push(...(await timeCommands(store, 'snap-1', withSnapshots, params.commandsPerRound)));
      if (!first) full.push(...(await timeCommands(store, 'full-1', counted, params.commandsPerRound)));
    }
    const { rows } = await database.query(`SELECT stream_version FROM ${store.tables.snapshots} WHERE stream_id = $1`, [
      'snap-1',
    ]);
    const fullSummary = summary(full);
    const snapshotSummary = summary(snapshot);
    return {
      benchmark: 'eventstore-command-on-long-stream',
      started_at: new Date().toISOString(),
      node_version: process.version,
      cpu_count: os.cpus().length,
      parameters: { ...params, databaseUrl: redact(params.databaseUrl), schema },
      warmup: { full_replay: summary(warmupFull), snapshot: summary(warmupSnapshot) },
      full_replay: fullSummary,
      snapshot: { ...snapshotSummary, snapshot_at_version: rows[0]?.stream_version ?? null },
      ratio_p50_full_over_snapshot: round(fullSummary.p50_ms / snapshotSummary.p50_ms, 1),
      // Valid when the snapshot side really started from a snapshot.
      valid: rows.length === 1 && rows[0].stream_version >= params.streamEvents,
    };
  } finally {
    await database.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch((error) => {
      console.error(`command benchmark: could not drop schema ${schema}:`, error);
      process.exitCode = 1;
    });
    await database.close();
  }
}

main().then(
  (result) => process.stdout.write(`${JSON.stringify(result, null, 2)}\n`),
  (error) => {
    console.error('command benchmark failed:', error);
    process.exitCode = 1;
  },
);
