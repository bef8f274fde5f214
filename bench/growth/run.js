'use strict';
// How a write path's cost grows with a merchant's size (issue 30, part 1): one organization is
// grown to each size in turn, and at each the same measured batch of paid SUBSCRIPTION checkouts
// is provisioned by billing (`checkout.completed` on the bus -> customer, subscription, paid
// invoice). Prints one JSON object: per size the provisioning rate and its ratio to the first
// size's, and the statements whose time per checkout grew most. See README.md.
const { randomBytes } = require('node:crypto');
const pg = require('pg');
const { createInfrastructure, runService } = require('@billing/runtime');
const { CHECKOUT_TOPIC } = require('@billing/contracts');
const { billingService } = require('@billing/billing');
const { setting, positiveSetting } = require('../settings');
const { paidCheckout } = require('../paid-checkout');
const {
  internalSecret,
  machine,
  pollUntil,
  randomName,
  runBenchmark,
  serviceLogger,
  stopPlatform,
} = require('../platform');

const readParameters = () => ({
  sizes: String(setting('sizes', 'BENCH_GROWTH_SIZES', '1000,5000,20000'))
    .split(',')
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0)
    .sort((a, b) => a - b),
  measured: positiveSetting('measured', 'BENCH_GROWTH_MEASURED', 500),
  analyze: setting('analyze', 'BENCH_GROWTH_ANALYZE', 'on') !== 'off',
});

/**
 * Every statement's time by text, while `recording`: the pg client's queries, timed from send
 * to answer (waits for locks included), schema names folded so that runs compare.
 */
function statementClock() {
  const byText = new Map();
  let recording = false;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function timed(config, values, callback) {
    const result = query.call(this, config, values, callback);
    if (!recording || !result || typeof result.then !== 'function') return result;
    const text = String(typeof config === 'string' ? config : config?.text)
      .replace(/"bench_[a-z]+_[0-9a-f]+"/g, 'S')
      .replace(/\s+/g, ' ')
      .slice(0, 140);
    const started = performance.now();
    result.then(
      () => {
        const seen = byText.get(text) ?? { count: 0, ms: 0 };
        seen.count += 1;
        seen.ms += performance.now() - started;
        byText.set(text, seen);
      },
      () => {},
    );
    return result;
  };
  return {
    start: () => {
      byText.clear();
      recording = true;
    },
    stop: () => {
      recording = false;
      return new Map(byText);
    },
  };
}

/** Set by SIGINT/SIGTERM: the wait in progress fails, and main's cleanup runs. */
let interrupted = null;

async function main() {
  const parameters = readParameters();
  const clock = statementClock();
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    KAFKA_TOPIC_PREFIX: `${randomName('bench-growth')}.`,
  };
  const infrastructure = await createInfrastructure({ clientId: 'bench-growth', dataDir: 'memory', env });
  const schema = randomName('bench_billing');
  const platform = { infrastructure, services: [], schemas: [schema] };
  try {
    const billing = await runService(billingService, infrastructure, {
      port: 0,
      schema,
      config: { BILLING_TRIAL_SWEEP_INTERVAL_MS: '3600000' },
      internalSecret,
      logger: serviceLogger('billing'),
    });
    platform.services.push(billing);
    const organization = `org_${randomBytes(8).toString('hex')}`;
    let buyers = 0;
    const subscriptions = async () =>
      (await infrastructure.database.query(`SELECT count(*)::int AS n FROM "${schema}".subscriptions`)).rows[0].n;
    /** Publishes `count` paid checkouts of new buyers and waits until billing holds them all. */
    const provision = async (count) => {
      const target = buyers + count;
      const events = Array.from({ length: count }, () => paidCheckout(organization, buyers++));
      const started = performance.now();
      for (let i = 0; i < events.length; i += 200) {
        const slice = events.slice(i, i + 200).map((event) => ({ key: event.stream, value: event }));
        await infrastructure.bus.publish(CHECKOUT_TOPIC, slice);
      }
      const provisioned = async () => {
        if (interrupted) throw new Error(`interrupted by ${interrupted}`);
        return (await subscriptions()) >= target;
      };
      const done = await pollUntil(provisioned, `provisioning ${target}`, { timeoutMs: 1_800_000 });
      return (done - started) / 1000;
    };

    const results = [];
    for (const size of parameters.sizes) {
      const grow = size - parameters.measured - buyers;
      if (grow > 0) await provision(grow);
      // What autovacuum does for a table that grew; without it the planner may keep a plan made
      // for an empty table (docs: README's Performance section).
      if (parameters.analyze)
        await infrastructure.database.exec(
          `ANALYZE "${schema}".customers, "${schema}".subscriptions, "${schema}".invoices, "${schema}".events`,
        );
      clock.start();
      const seconds = await provision(parameters.measured);
      const statements = clock.stop();
      results.push({
        subscriptions: buyers,
        checkouts_per_s: Number((parameters.measured / seconds).toFixed(1)),
        statements: [...statements]
          .map(([text, { count, ms }]) => ({
            text,
            per_checkout: count / parameters.measured,
            ms_per_checkout: ms / parameters.measured,
          }))
          .sort((a, b) => b.ms_per_checkout - a.ms_per_checkout),
      });
    }
    const first = results[0];
    const firstMs = new Map(first.statements.map((s) => [s.text, s.ms_per_checkout]));
    return {
      benchmark: 'growth',
      started_at: new Date().toISOString(),
      valid: true,
      path: 'billing provisioning of a paid SUBSCRIPTION checkout (checkout.completed -> customer, subscription, paid invoice)',
      database: process.env.DATABASE_URL ? 'postgres' : 'pglite',
      bus: process.env.KAFKA_BROKERS ? 'kafka' : 'database',
      parameters,
      sizes: results.map((r) => ({
        subscriptions: r.subscriptions,
        checkouts_per_s: r.checkouts_per_s,
        cost_ratio_to_first: Number((first.checkouts_per_s / r.checkouts_per_s).toFixed(2)),
        // The statements whose time per checkout grew most since the first size.
        grown: r.statements
          .map((s) => ({ ...s, grew_ms: s.ms_per_checkout - (firstMs.get(s.text) ?? 0) }))
          .sort((a, b) => b.grew_ms - a.grew_ms)
          .slice(0, 3)
          .map((s) => ({
            text: s.text,
            ms_per_checkout: Number(s.ms_per_checkout.toFixed(2)),
            grew_ms: Number(s.grew_ms.toFixed(2)),
          })),
      })),
      machine: machine(),
    };
  } finally {
    await stopPlatform(platform, 'growth');
  }
}

runBenchmark('growth', main, (signal) => {
  interrupted = signal;
});
