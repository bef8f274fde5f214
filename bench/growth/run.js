'use strict';
// How the write paths and the dashboard's overview cost as one merchant grows (issue 30, part 1):
// one organization is grown to each size in turn, and at each the same measured work runs
// through the whole platform: billing provisioning paid checkouts, buyers paying on the hosted
// page, plan switches, renewals falling due on a test clock with their webhooks, and the
// overview's metrics. Prints one JSON object: per size each path's figure and its ratio to the
// first size's, and the statements whose time grew most. See README.md.
const { execFile } = require('node:child_process');
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const pg = require('pg');
const { CHECKOUT_TOPIC } = require('@billing/contracts');
const { startFullPlatform } = require('../full-platform');
const { setting, positiveSetting } = require('../settings');
const { paidCheckout } = require('../paid-checkout');
const { startReceiver } = require('../webhook-receiver');
const { adminPost, machine, percentiles, pollUntil, randomName, runBenchmark, stopPlatform } = require('../platform');

const PATHS = ['provisioning', 'checkout', 'switch', 'renewals', 'overview'];

const readParameters = () => ({
  sizes: String(setting('sizes', 'BENCH_GROWTH_SIZES', '1000,5000,20000'))
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b),
  provisioned: positiveSetting('measured', 'BENCH_GROWTH_MEASURED', 500),
  checkouts: positiveSetting('checkouts', 'BENCH_GROWTH_CHECKOUTS', 100),
  switches: positiveSetting('switches', 'BENCH_GROWTH_SWITCHES', 50),
  renewals: positiveSetting('renewals', 'BENCH_GROWTH_RENEWALS', 200),
  overview_reads: positiveSetting('overview-reads', 'BENCH_GROWTH_OVERVIEW_READS', 20),
  analyze: setting('analyze', 'BENCH_GROWTH_ANALYZE', 'on') !== 'off',
  paths: String(setting('paths', 'BENCH_GROWTH_PATHS', PATHS.join(',')))
    .split(',')
    .filter((name) => PATHS.includes(name)),
});

const round = (n, digits = 2) => Number(n.toFixed(digits));

/**
 * Every statement's time by text, while `recording`: the pg client's queries, timed from send
 * to answer (waits for locks included), schema names folded so that runs compare.
 */
function statementClock() {
  const byText = new Map();
  /** The three slowest statements of the phase, whole. */
  let slowest = [];
  let recording = false;
  const query = pg.Client.prototype.query;
  let sent = 0;
  pg.Client.prototype.query = function timed(config, values, callback) {
    sent += 1;
    const result = query.call(this, config, values, callback);
    if (!recording || !result || typeof result.then !== 'function') return result;
    const full = String(typeof config === 'string' ? config : config?.text)
      .replace(/"?bench_[a-z]+_[0-9a-f]+"?/g, 'S')
      .replace(/\s+/g, ' ')
      .replace(/SELECT global_position, transaction_id::text .*? FROM/, 'SELECT <event columns> FROM');
    const text = full.slice(0, 160);
    const started = performance.now();
    result.then(
      () => {
        const ms = performance.now() - started;
        const seen = byText.get(text) ?? { count: 0, ms: 0 };
        seen.count += 1;
        seen.ms += ms;
        byText.set(text, seen);
        if (ms > (slowest.at(-1)?.ms ?? 0) || slowest.length < 3) {
          slowest.push({ ms: round(ms, 1), text: full.slice(0, 400) });
          slowest.sort((a, b) => b.ms - a.ms).splice(3);
        }
      },
      () => {},
    );
    return result;
  };
  return {
    /**
     * Waits until the platform is idle (fewer than 150 statements a second, twice in a row; idle,
     * its relays' and sweeps' polls send about 70) and the machine quiet (under QUIET_CORES busy:
     * autovacuum, checkpoints, the broker), so that what consumers and the database still owe
     * for earlier work (growing the organization, an earlier path) is not measured as the next
     * path's cost.
     */
    async settle() {
      let quiet = 0;
      while (quiet < 2) {
        if (interrupted) throw new Error(`interrupted by ${interrupted}`);
        const before = sent;
        const busyBefore = machineBusy();
        await new Promise((resolve) => setTimeout(resolve, 1000));
        const cores = machineBusy() - busyBefore;
        quiet = sent - before < 150 && cores < QUIET_CORES ? quiet + 1 : 0;
      }
    },
    /**
     * Runs `work`, which answers how many units it did, and the statements' time per unit and
     * the write-ahead log written per unit (everything the server wrote, the platform's polls too).
     */
    async measure(work, database) {
      byText.clear();
      slowest = [];
      recording = true;
      try {
        const walBefore = await walWritten(database);
        const result = await work();
        const walAfter = await walWritten(database);
        const perUnit = new Map(
          [...byText].map(([text, { count, ms }]) => [text, { per_unit: count / result.units, ms: ms / result.units }]),
        );
        const wal = walBefore &&
          walAfter && {
            wal_kb_per_unit: round((walAfter.bytes - walBefore.bytes) / 1024 / result.units, 1),
            full_page_images_per_unit: round((walAfter.fpi - walBefore.fpi) / result.units, 1),
          };
        return { ...result, ...wal, statements: perUnit, slowest };
      } finally {
        recording = false;
      }
    },
  };
}

/**
 * The server's write-ahead log so far: bytes, and full-page images (a page's first change after
 * a checkpoint writes the whole page). Null on PGlite, whose statistics are not kept.
 */
async function walWritten(database) {
  if (!process.env.DATABASE_URL) return null;
  const { rows } = await database.query('SELECT wal_bytes::float8 AS bytes, wal_fpi::float8 AS fpi FROM pg_stat_wal');
  return rows[0] ?? null;
}

/** Cores' worth of CPU the whole machine may use, and still count as quiet. */
const QUIET_CORES = 0.5;

/**
 * Seconds of CPU the whole machine has been busy (every core, from /proc/stat): what autovacuum,
 * checkpoints and the broker do counts too. 0 where there is no /proc (then only statements count).
 */
function machineBusy() {
  try {
    const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    const idle = ticks[3] + ticks[4];
    return (ticks.reduce((sum, n) => sum + n, 0) - idle) / 100;
  } catch {
    return 0;
  }
}

/** Set by SIGINT/SIGTERM: the wait in progress fails, and main's cleanup runs. */
let interrupted = null;
let buyersChild;
const wait = (done, what) =>
  pollUntil(
    async () => {
      if (interrupted) throw new Error(`interrupted by ${interrupted}`);
      return done();
    },
    what,
    { timeoutMs: 3_600_000 },
  );

/** A request through the gateway: the admin API with the admin token, or the API with a key. */
async function call(platform, token, method, path, body) {
  const response = await fetch(`${platform.gateway.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** bench/checkout's buyers, in a process of their own: closed loop, each pays on the hosted page. */
function runBuyers(settings) {
  const script = join(__dirname, '..', 'checkout', 'buyers.js');
  return new Promise((resolve, reject) => {
    buyersChild = execFile(process.execPath, [script, JSON.stringify(settings)], { maxBuffer: 64 << 20 }, (e, out) => {
      buyersChild = undefined;
      if (e) reject(interrupted ? new Error(`interrupted by ${interrupted}`) : e);
      else resolve(JSON.parse(out));
    });
  });
}

/** The organization, its two monthly plans and a webhook endpoint for renewals. */
async function seed(platform, receiver) {
  const organization = await adminPost(platform, '/organizations', { name: 'Growth' });
  const product = (slug, price) =>
    adminPost(platform, `/organizations/${organization.id}/products`, {
      environment: 'SANDBOX',
      name: slug,
      slug,
      type: 'SUBSCRIPTION',
      interval: 'month',
      price,
    });
  const basic = await product('basic', 299);
  const pro = await product('pro', 499);
  const endpoint = await adminPost(platform, `/organizations/${organization.id}/webhook_endpoints`, {
    environment: 'SANDBOX',
    url: receiver.url('/hook'),
    events: ['subscription.renewed'],
  });
  receiver.secrets.set('/hook', endpoint.secret);
  const summary = ({ id, name, slug, type, interval, interval_count, price }) => ({
    ...{ id, name, slug, type, interval, interval_count, price },
    trial_days: null,
  });
  return {
    organization,
    secretKey: organization.api_keys.sandbox.secret_key,
    basic: summary(basic),
    pro: summary(pro),
  };
}

async function main() {
  const parameters = readParameters();
  const clock = statementClock();
  const receiver = await startReceiver();
  const platform = await startFullPlatform('growth');
  const { database } = platform.infrastructure;
  const billing = `"${platform.schema.billing}"`;
  const count = async (sql, params = []) => (await database.query(sql, params)).rows[0].n;
  try {
    const shop = await seed(platform, receiver);
    const org = shop.organization.id;
    const subscriptions = () => count(`SELECT count(*)::int AS n FROM ${billing}.subscriptions`);
    let buyers = 0;

    /** Publishes `n` paid checkouts of new buyers (on `clockId`) and waits until billing holds them all. */
    const provision = async (n, clockId = null) => {
      const target = (await subscriptions()) + n;
      const started = performance.now();
      for (let i = 0; i < n; i += 200) {
        const slice = Array.from({ length: Math.min(200, n - i) }, () =>
          paidCheckout(org, buyers++, clockId, shop.basic),
        );
        await platform.infrastructure.bus.publish(
          CHECKOUT_TOPIC,
          slice.map((event) => ({ key: event.stream, value: event })),
        );
      }
      const done = await wait(async () => (await subscriptions()) >= target, `provisioning ${target}`);
      return (done - started) / 1000;
    };

    const paths = {
      /** Billing provisioning paid checkouts from the bus: checkouts per second. */
      provisioning: async () => {
        const seconds = await provision(parameters.provisioned);
        return { units: parameters.provisioned, per_s: round(parameters.provisioned / seconds, 1) };
      },
      /** Buyers creating and paying checkouts through the gateway (4 at a time), until billing holds them. */
      checkout: async () => {
        const before = await subscriptions();
        const started = performance.now();
        const timings = await runBuyers({
          gateway: platform.gateway.url,
          secretKey: shop.secretKey,
          productId: shop.basic.id,
          checkouts: parameters.checkouts,
          concurrency: 4,
          prefix: randomName('buyer'),
        });
        if (timings.errors.length > 0) throw new Error(`checkouts failed: ${timings.errors[0]}`);
        const done = await wait(async () => (await subscriptions()) >= before + parameters.checkouts, 'checkouts');
        return {
          units: parameters.checkouts,
          per_s: round(parameters.checkouts / ((done - started) / 1000), 1),
          create_p50_ms: percentiles(timings.create).p50,
          pay_p50_ms: percentiles(timings.pay).p50,
        };
      },
      /** Immediate upgrades with proration, one at a time, of subscriptions not switched before. */
      switch: async () => {
        const { rows } = await database.query(
          `SELECT id FROM ${billing}.subscriptions
           WHERE organization = $1 AND product_id = $2 AND status = 'ACTIVE' AND test_clock_id IS NULL LIMIT $3`,
          [org, shop.basic.id, parameters.switches],
        );
        const times = [];
        for (const { id } of rows) {
          const started = performance.now();
          await call(platform, shop.secretKey, 'POST', `/v1/subscriptions/${id}/switch`, {
            target_product_id: shop.pro.id,
          });
          times.push(performance.now() - started);
        }
        return { units: rows.length, p50_ms: percentiles(times).p50 };
      },
      /** Renewals falling due at one instant on a test clock, until paid and their webhooks delivered. */
      renewals: async () => {
        const n = parameters.renewals;
        const testClock = await call(platform, shop.secretKey, 'POST', '/v1/test_clocks', {
          frozen_time: '2026-01-31T10:00:00Z',
        });
        await provision(n, testClock.id);
        const ids = (
          await database.query(`SELECT id FROM ${billing}.subscriptions WHERE test_clock_id = $1`, [testClock.id])
        ).rows.map((row) => row.id);
        const started = performance.now();
        await call(platform, shop.secretKey, 'POST', `/v1/test_clocks/${testClock.id}/advance`, {
          frozen_time: '2026-03-01T00:00:00Z',
        });
        const paid = await wait(
          async () =>
            (await count(
              `SELECT count(*)::int AS n FROM ${billing}.invoices WHERE subscription_id = ANY($1) AND status = 'paid'`,
              [ids],
            )) >=
            2 * n,
          'renewals',
        );
        const delivered = await wait(() => ids.every((id) => receiver.arrivals.has(`/hook ${id}`)), 'webhooks');
        return {
          units: n,
          per_s: round(n / ((paid - started) / 1000), 1),
          last_webhook_after_ms: round(delivered - started, 0),
        };
      },
      /** The reads of the dashboard's overview of a year, through the gateway's admin API, as its page makes them. */
      overview: async () => {
        const to = new Date(Date.now() + 8 * 3_600_000).toISOString().slice(0, 10);
        const from = new Date(Date.parse(to) - 364 * 86_400_000).toISOString().slice(0, 10);
        const reads = [
          `metrics?environment=SANDBOX&from=${from}&to=${to}`,
          'unmatched_payments?environment=sandbox',
          'pending_charges?environment=SANDBOX',
        ];
        const times = [];
        for (let i = 0; i < parameters.overview_reads; i++) {
          const started = performance.now();
          await Promise.all(
            reads.map((read) => call(platform, platform.adminToken, 'GET', `/admin/v1/organizations/${org}/${read}`)),
          );
          times.push(performance.now() - started);
        }
        return { units: parameters.overview_reads, p50_ms: percentiles(times).p50 };
      },
    };
    // What each size's measured work adds to the organization's subscriptions.
    const adds = {
      provisioning: parameters.provisioned,
      checkout: parameters.checkouts,
      renewals: parameters.renewals,
    };
    const added = parameters.paths.reduce((sum, name) => sum + (adds[name] ?? 0), 0);

    const results = [];
    for (const size of parameters.sizes) {
      const grow = size - added - (await subscriptions());
      if (grow > 0) await provision(grow);
      // Without statistics the planner may keep a plan made for an empty table (README.md).
      if (parameters.analyze) await vacuum(database, platform.schemas);
      const measured = {};
      for (const name of parameters.paths) {
        await clock.settle();
        measured[name] = await clock.measure(paths[name], database);
      }
      results.push({ subscriptions: await subscriptions(), measured });
    }
    return report(parameters, results);
  } finally {
    buyersChild?.kill();
    await stopPlatform(platform, 'growth');
    await receiver.close();
  }
}

/**
 * What autovacuum does once a table has grown, done now rather than during a measured path:
 * VACUUM (ANALYZE) of every table of the platform's schemas, then a checkpoint.
 */
async function vacuum(database, schemas) {
  const { rows } = await database.query(
    `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables WHERE schemaname = ANY($1)`,
    [schemas],
  );
  if (rows.length > 0) await database.exec(`VACUUM (ANALYZE) ${rows.map((row) => row.name).join(', ')}`);
  await database.exec('CHECKPOINT');
}

/** Each path's figure per size with its cost ratio to the first size (1.0 is flat; above is costlier). */
function report(parameters, results) {
  const [first] = results;
  const costOf = (figures) => (figures.per_s ? 1 / figures.per_s : (figures.p50_ms ?? 0));
  const sizes = results.map(({ subscriptions, measured }) => ({
    subscriptions,
    paths: Object.fromEntries(
      Object.entries(measured).map(([name, { statements, slowest, units: _units, ...figures }]) => {
        const base = first.measured[name];
        return [
          name,
          {
            ...figures,
            cost_ratio_to_first: round(costOf(figures) / costOf(base)),
            // The statements whose time per unit grew most since the first size.
            grown: [...statements]
              .map(([text, s]) => ({ text, ms: s.ms, grew: s.ms - (base.statements.get(text)?.ms ?? 0) }))
              .sort((a, b) => b.grew - a.grew)
              .slice(0, 2)
              .map((s) => ({ text: s.text, ms_per_unit: round(s.ms), grew_ms: round(s.grew) })),
            slowest_statements: slowest,
          },
        ];
      }),
    ),
  }));
  const worst = Object.fromEntries(
    Object.keys(first.measured).map((name) => [
      name,
      Math.max(...sizes.map((size) => size.paths[name].cost_ratio_to_first)),
    ]),
  );
  return {
    benchmark: 'growth',
    started_at: new Date().toISOString(),
    valid: true,
    database: process.env.DATABASE_URL ? 'postgres' : 'pglite',
    bus: process.env.KAFKA_BROKERS ? 'kafka' : 'database',
    parameters,
    worst_cost_ratio: worst,
    sizes,
    machine: machine(),
  };
}

runBenchmark('growth', main, (signal) => {
  interrupted = signal;
  buyersChild?.kill();
});
