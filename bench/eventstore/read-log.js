'use strict';
// How reading the whole event log grows with its size: a subscriber's pages (`readAll`, as the
// relay and the projections read it) over a log of BENCH_LOG_EVENTS events and over one ten
// times larger, each read BENCH_ROUNDS times, alternating. Linear reading takes about ten times
// as long for ten times the events. Prints one JSON object to stdout; see README.md.
const os = require('node:os');
const { performance } = require('node:perf_hooks');
const { EventStore, START_OF_LOG, positionOf, postgresDatabase } = require('@billing/eventstore');
const { positiveSetting, setting } = require('../settings');

function readParameters() {
  return {
    databaseUrl: setting('database-url', 'DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres'),
    logEvents: positiveSetting('log-events', 'BENCH_LOG_EVENTS', '10000'),
    pageSize: positiveSetting('page-size', 'BENCH_PAGE_SIZE', '500'),
    rounds: positiveSetting('rounds', 'BENCH_ROUNDS', '3'),
  };
}

const redact = (url) => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
const round = (n, digits) => Number(n.toFixed(digits));
/** How much longer than ten times reading ten times the events may take and still count as linear. */
const LINEAR_SLACK = 1.5;

/** `count` events over streams of 100 (as many aggregates would make), 1000 per append. */
async function fill(store, count) {
  for (let written = 0; written < count;) {
    const appends = [];
    for (let n = 0; n < 10 && written < count; n++) {
      const size = Math.min(100, count - written);
      const events = Array.from({ length: size }, (_, i) => ({ type: 'Logged', data: { n: written + i } }));
      const options = { expectedVersion: 0, organization: 'org_bench', environment: 'SANDBOX', occurredAt: new Date() };
      appends.push({ stream: `log-${written}`, events, options });
      written += size;
    }
    await store.transaction((tx) => tx.appendMany(appends));
  }
}

/** Reads the whole log page by page from the start; returns seconds and the events read. */
async function readWholeLog(store, pageSize) {
  const started = performance.now();
  let position = START_OF_LOG;
  let events = 0;
  for (;;) {
    const page = await store.readAll(position, pageSize);
    if (page.length === 0) break;
    events += page.length;
    position = positionOf(page.at(-1));
  }
  return { seconds: (performance.now() - started) / 1000, events };
}

async function main() {
  const params = readParameters();
  const stamp = `${process.pid}_${Date.now()}`;
  const database = postgresDatabase({ connectionString: params.databaseUrl, max: 2 });
  const schemas = { small: `bench_readlog_small_${stamp}`, large: `bench_readlog_large_${stamp}` };
  const small = new EventStore(database, { schema: schemas.small });
  const large = new EventStore(database, { schema: schemas.large });
  const sizes = { small: params.logEvents, large: params.logEvents * 10 };
  try {
    for (const store of [small, large]) await store.migrate();
    await fill(small, sizes.small);
    await fill(large, sizes.large);
    await database.exec(`ANALYZE ${small.tables.events}; ANALYZE ${large.tables.events}`);
    const warmup = {
      small: await readWholeLog(small, params.pageSize),
      large: await readWholeLog(large, params.pageSize),
    };
    const seconds = { small: [], large: [] };
    for (let r = 0; r < params.rounds; r++) {
      const order = r % 2 === 0 ? ['small', 'large'] : ['large', 'small'];
      for (const side of order) {
        const read = await readWholeLog(side === 'small' ? small : large, params.pageSize);
        if (read.events !== sizes[side]) throw new Error(`read ${read.events} of ${sizes[side]} events`);
        seconds[side].push(read.seconds);
      }
    }
    const best = (side) => Math.min(...seconds[side]);
    const growth = best('large') / best('small');
    process.stdout.write(
      `${JSON.stringify(
        {
          benchmark: 'eventstore-read-log',
          parameters: { ...params, databaseUrl: redact(params.databaseUrl) },
          machine: { cpus: os.cpus().length, node: process.version },
          warmup_seconds: { small: round(warmup.small.seconds, 3), large: round(warmup.large.seconds, 3) },
          small: { events: sizes.small, seconds: seconds.small.map((s) => round(s, 3)) },
          large: { events: sizes.large, seconds: seconds.large.map((s) => round(s, 3)) },
          events_per_s: { small: round(sizes.small / best('small'), 0), large: round(sizes.large / best('large'), 0) },
          // Best of the rounds on each side: the least disturbed by the rest of the machine.
          growth_for_10x_events: round(growth, 2),
          linear: growth <= 10 * LINEAR_SLACK,
          valid: true,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    for (const schema of Object.values(schemas)) await database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
