'use strict';
// GET /v1/products through the gateway beside the same request sent straight to the catalog and
// through a bare keep-alive proxy (bare-proxy.js, what forwarding alone costs), in the same run: throughput at saturation (autocannon, closed loop) and the latency the gateway
// adds at half its load (open loop, fixed rate), the sides taking turns in rounds; with the
// in-memory rate-limit store and, when REDIS_URL is set, with Redis. On PostgreSQL the catalog
// runs in a process of its own, as in the distributed topology; embedded, everything shares one
// process, as `npm start` runs it. Prints JSON; see README.md.
const { execFile, fork } = require('node:child_process');
const { createInfrastructure, runService } = require('@billing/runtime');
const { signInternalCall } = require('@billing/signing');
const { catalogService } = require('@billing/catalog');
const { createGatewayService } = require('@billing/gateway');
const { countSetting, positiveSetting, setting } = require('../settings');
const { costsPerRequest, profiled, sharesByCheck } = require('./check-costs');
const {
  adminPost,
  machine,
  percentiles,
  internalSecret,
  randomName: random,
  runBenchmark,
  serviceLogger: logger,
  stopPlatform,
} = require('../platform');

const AUTOCANNON = require.resolve('autocannon/autocannon.js');
const OPEN_LOOP = require.resolve('../open-loop.js');
const CATALOG_PROCESS = require.resolve('./catalog-process.js');
const BARE_PROXY = require.resolve('./bare-proxy.js');
const PRODUCTS = 20;
const TOPOLOGIES = ['one-process', 'catalog-process'];

/** PostgreSQL: the catalog in a process of its own by default; embedded PGlite lives in one process. */
function readTopology() {
  const topology = setting('topology', 'BENCH_TOPOLOGY', process.env.DATABASE_URL ? 'catalog-process' : 'one-process');
  if (!TOPOLOGIES.includes(topology)) throw new Error(`BENCH_TOPOLOGY must be one of ${TOPOLOGIES}, got ${topology}`);
  if (topology === 'catalog-process' && !process.env.DATABASE_URL) {
    throw new Error('BENCH_TOPOLOGY=catalog-process needs DATABASE_URL: an embedded database lives in one process');
  }
  return topology;
}

const readParameters = () => ({
  topology: readTopology(),
  rounds: positiveSetting('rounds', 'BENCH_ROUNDS', 3),
  round_s: positiveSetting('duration', 'BENCH_DURATION', 4),
  connections: positiveSetting('connections', 'BENCH_CONNECTIONS', 16),
  warmup_s: positiveSetting('warmup', 'BENCH_WARMUP', 2),
  half_load_s: positiveSetting('half-load', 'BENCH_HALF_LOAD_DURATION', 4),
  slowest: countSetting('slowest', 'BENCH_SLOWEST', 0),
  profile_dir: setting('profile-dir', 'BENCH_PROFILE_DIR', null),
  products: PRODUCTS,
  rate_limit_stores: process.env.REDIS_URL ? ['memory', 'redis'] : ['memory'],
});

const round = (n, digits = 3) => Number(n.toFixed(digits));

/**
 * `script` in a child process (catalog-process.js, bare-proxy.js), once it listens: its URL, its
 * CPU time, stop.
 */
function startChildProcess(script, env) {
  const catalogProcess = fork(script, [], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise((resolve) => catalogProcess.once('exit', resolve));
  const nextMessage = (key) =>
    new Promise((resolve, reject) => {
      const onMessage = (message) => {
        if (message?.[key] === undefined) return;
        catalogProcess.off('exit', onExit);
        catalogProcess.off('message', onMessage);
        resolve(message[key]);
      };
      const onExit = (code) => {
        catalogProcess.off('message', onMessage);
        reject(new Error(`${script} exited (${code})`));
      };
      catalogProcess.on('message', onMessage);
      catalogProcess.once('exit', onExit);
    });
  return nextMessage('url').then(
    (url) => ({
      url,
      cpuUsage: () => {
        const answer = nextMessage('cpu');
        catalogProcess.send('cpu');
        return answer;
      },
      shutdown: async () => {
        if (catalogProcess.connected) catalogProcess.send('stop');
        await exited;
      },
    }),
    async (error) => {
      catalogProcess.kill();
      throw error;
    },
  );
}

/**
 * The catalog (in this process or its own, by `topology`), and one gateway per rate-limit store
 * in this process, on loopback port 0, each in a schema of its own.
 */
async function startPlatform({ rate_limit_stores: stores, topology }) {
  const env = { DATABASE_URL: process.env.DATABASE_URL, DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE };
  const infrastructure = await createInfrastructure({ clientId: 'bench-gateway', dataDir: 'memory', env });
  const platform = { infrastructure, services: [], schemas: [], adminToken: random('adm'), gateways: {} };
  const start = async (definition, config) => {
    const schema = random(`bench_${definition.name}`);
    platform.schemas.push(schema);
    const service = await runService(definition, infrastructure, {
      port: 0,
      schema,
      config,
      internalSecret,
      logger: logger(definition.name),
    });
    platform.services.unshift(service); // stopped in reverse order: gateways first
    return service;
  };
  try {
    if (topology === 'catalog-process') {
      platform.catalog = await startChildProcess(CATALOG_PROCESS, { BENCH_INTERNAL_SECRET: internalSecret });
      platform.services.push(platform.catalog); // stopped last, after the gateways
    } else {
      platform.catalog = await start(catalogService, {});
    }
    // A bare keep-alive proxy in front of the same catalog: what forwarding alone costs.
    platform.bareProxy = await startChildProcess(BARE_PROXY, { BENCH_UPSTREAM: platform.catalog.url });
    platform.services.unshift(platform.bareProxy);
    for (const store of stores) {
      platform.gateways[store] = await start(createGatewayService(), {
        ADMIN_TOKEN: platform.adminToken,
        CATALOG_SERVICE_URL: platform.catalog.url,
        // Lifts the per-key limit (120/min in Sandbox) so the run measures the gateway, not its 429s.
        RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000000',
        ...(store === 'redis' ? { REDIS_URL: process.env.REDIS_URL, RATE_LIMIT_PREFIX: random('bench') } : {}),
      });
    }
  } catch (error) {
    await stopPlatform(platform, 'gateway');
    throw error;
  }
  return platform;
}

/** One organization with PRODUCTS Sandbox plans through `gateway`'s admin API; its Secret Key. */
async function seedOrganization(platform, gateway) {
  const admin = { gateway, adminToken: platform.adminToken };
  const organization = await adminPost(admin, '/organizations', { name: 'Bench' });
  for (let i = 0; i < PRODUCTS; i++) {
    const product = { environment: 'SANDBOX', name: `Plan ${i}`, type: 'SUBSCRIPTION', interval: 'month', price: 299 };
    await adminPost(admin, `/organizations/${organization.id}/products`, product);
  }
  return organization;
}

/**
 * The targets: `direct` (the catalog with signed identity headers), `bare_proxy` (the same
 * request through a bare proxy) and `gateway_<store>`.
 */
async function seed(platform) {
  const targets = {};
  let identity;
  for (const [store, gateway] of Object.entries(platform.gateways)) {
    const organization = await seedOrganization(platform, gateway);
    identity ??= { organization: organization.id, environment: 'SANDBOX', keyKind: 'secret', keyId: 'key_bench' };
    targets[`gateway_${store}`] = {
      url: `${gateway.url}/v1/products`,
      headers: { authorization: `Bearer ${organization.api_keys.sandbox.secret_key}` },
    };
  }
  // Signed as the gateway signs, afresh for each run: a signature is good for a minute.
  const signed = {
    get headers() {
      return signInternalCall(internalSecret, { scope: 'key', method: 'GET', path: '/v1/products', identity });
    },
  };
  targets.bare_proxy = Object.defineProperties(
    { url: `${platform.bareProxy.url}/v1/products` },
    Object.getOwnPropertyDescriptors(signed),
  );
  targets.direct = Object.defineProperties(
    { url: `${platform.catalog.url}/v1/products` },
    Object.getOwnPropertyDescriptors(signed),
  );
  return targets;
}

/** Every target must answer 200 with every product before anything is measured. */
async function checkTarget(name, { url, headers }) {
  const response = await fetch(url, { headers });
  const body = await response.json();
  if (response.status !== 200 || body.data?.length !== PRODUCTS) {
    throw new Error(`${name}: expected 200 with ${PRODUCTS} products, got ${response.status} ${JSON.stringify(body)}`);
  }
}

/** A load generator in a child process, so that it does not share the services' event loop. */
let child;
let interrupted;
function runChild(args) {
  if (interrupted) return Promise.reject(new Error(`interrupted by ${interrupted}`));
  return new Promise((resolve, reject) => {
    child = execFile(process.execPath, args, { maxBuffer: 64 << 20 }, (error, stdout) => {
      child = undefined;
      if (error) reject(interrupted ? new Error(`interrupted by ${interrupted}`) : error);
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

/**
 * CPU time (user + system, microseconds) so far of each process that serves requests: this one
 * (the gateways, and in one process also the catalog) and the catalog's own when it has one.
 */
async function cpuTimes(platform) {
  const total = ({ user, system }) => user + system;
  const times = { this_process: total(process.cpuUsage()) };
  if (platform.catalog.cpuUsage) times.catalog_process = total(await platform.catalog.cpuUsage());
  times.bare_proxy_process = total(await platform.bareProxy.cpuUsage());
  return times;
}

/** autocannon, closed loop: `connections` clients each sending its next request on an answer. */
async function saturate(platform, { url, headers }, connections, seconds) {
  const args = [AUTOCANNON, '--json', '-c', String(connections), '-d', String(seconds)];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  const cpuBefore = await cpuTimes(platform);
  const r = await runChild([...args, url]);
  const cpuAfter = await cpuTimes(platform);
  return {
    requests: r.requests.total,
    seconds: r.duration,
    rps: round(r.requests.total / r.duration, 1),
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    failed: r.errors + r.timeouts + r.non2xx,
    cpu: { before: cpuBefore, after: cpuAfter },
  };
}

/** A timer's lateness past this (ms) counts as a stall of this process's event loop. */
const STALL_MS = 50;
const PROBE_MS = 10;

/**
 * Watches this process's event loop (the gateways', and in one process also the catalog's)
 * while `work` runs: every time a 10 ms timer fired more than STALL_MS late, when it was due
 * (wall clock) and by how much.
 */
async function watchingStalls(work) {
  const stalls = [];
  let due = performance.now() + PROBE_MS;
  const probe = setInterval(() => {
    const now = performance.now();
    if (now - due > STALL_MS) {
      stalls.push({ at: new Date(performance.timeOrigin + due).toISOString(), late_ms: round(now - due, 1) });
    }
    due = now + PROBE_MS;
  }, PROBE_MS);
  try {
    return { result: await work(), stalls };
  } finally {
    clearInterval(probe);
  }
}

/**
 * The machine's TCP counters that show dropped connection attempts (Linux, /proc/net/netstat;
 * every process's, not only the bench's): connections refused for a full accept queue, and SYNs
 * sent again (after 1 s, then 3 s, 7 s, ... in all) because none was answered.
 */
function tcpCounters() {
  let lines;
  try {
    lines = require('node:fs').readFileSync('/proc/net/netstat', 'utf8').split('\n');
  } catch {
    return undefined;
  }
  const names = lines.find((line) => line.startsWith('TcpExt:'))?.split(/\s+/);
  const values = lines.filter((line) => line.startsWith('TcpExt:'))[1]?.split(/\s+/);
  if (!names || !values) return undefined;
  const of = (name) => Number(values[names.indexOf(name)]);
  return { listen_overflows: of('ListenOverflows'), syn_retransmits: of('TCPSynRetrans') };
}

/**
 * Open loop at `rate` requests per second for `seconds`. With `slowest` > 0 also the slowest
 * requests, when this run went (wall clock), the stalls of this process's event loop and how
 * the machine's TCP counters moved.
 */
async function fixedRate({ url, headers }, rate, seconds, slowest) {
  const run = () => runChild([OPEN_LOOP, JSON.stringify({ url, headers, rate, seconds, slowest })]);
  if (!slowest) return run();
  const from = new Date().toISOString();
  const tcpBefore = tcpCounters();
  const { result, stalls } = await watchingStalls(run);
  const tcpAfter = tcpCounters();
  const tcp =
    tcpBefore && tcpAfter && Object.fromEntries(Object.keys(tcpAfter).map((k) => [k, tcpAfter[k] - tcpBefore[k]]));
  return { ...result, window: { from, to: new Date().toISOString() }, stalls, machine_tcp: tcp ?? null };
}

/** Runs `measure(name)` for every target in `rounds` rounds, the order reversed every other round. */
async function inRounds(names, rounds, measure) {
  const results = Object.fromEntries(names.map((name) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const name of r % 2 === 0 ? names : [...names].reverse()) results[name].push(await measure(name));
  }
  return results;
}

/** CPU microseconds per request of each process over `runs`. */
function cpuOfRuns(runs, requests) {
  const spent = {};
  for (const { cpu } of runs) {
    for (const name of Object.keys(cpu.after)) spent[name] = (spent[name] ?? 0) + cpu.after[name] - cpu.before[name];
  }
  return Object.fromEntries(Object.entries(spent).map(([name, us]) => [name, Math.round(us / requests)]));
}

/** Throughput at saturation: each side's requests over its seconds, summed over the rounds. */
async function saturation(platform, targets, params) {
  const names = Object.keys(targets);
  const run = (name, seconds) => saturate(platform, targets[name], params.connections, seconds);
  const warmup = await inRounds(names, 1, (name) => run(name, params.warmup_s));
  const runs = await inRounds(names, params.rounds, (name) => run(name, params.round_s));
  const sides = {};
  for (const name of names) {
    const requests = runs[name].reduce((sum, run) => sum + run.requests, 0);
    const seconds = runs[name].reduce((sum, run) => sum + run.seconds, 0);
    sides[name] = {
      requests,
      rps: round(requests / seconds, 1),
      round_rps: runs[name].map((run) => run.rps),
      round_latency_p99_ms: runs[name].map((run) => run.latency_p99_ms),
      failed: runs[name].reduce((sum, run) => sum + run.failed, 0),
      warmup_rps: warmup[name][0].rps,
      cpu_us_per_request: cpuOfRuns(runs[name], requests),
    };
  }
  const ratios = {};
  for (const name of names.filter((n) => n !== 'direct')) {
    ratios[`${name}_over_direct`] = round(sides[name].rps / sides.direct.rps);
    ratios[`${name}_over_direct_by_round`] = runs[name].map((run, r) => round(run.rps / runs.direct[r].rps));
  }
  // With the catalog in its own process, this process is the gateway alone: what its checks cost
  // per request beyond forwarding (the bare proxy's CPU per request).
  if (params.topology === 'catalog-process') {
    const forwarding = sides.bare_proxy.cpu_us_per_request.bare_proxy_process;
    for (const name of names.filter((n) => n.startsWith('gateway_'))) {
      ratios[`${name}_cpu_us_beyond_bare_proxy`] = sides[name].cpu_us_per_request.this_process - forwarding;
    }
  }
  return { sides, ratios };
}

/**
 * What each check of each gateway costs per request (check-costs.js): one more saturation run of
 * each gateway with this process's CPU profiled. Only with the catalog in a process of its own,
 * where this process is the gateways alone.
 */
async function checkCosts(platform, targets, saturated, params) {
  if (params.topology !== 'catalog-process') return undefined;
  const costs = {};
  for (const name of Object.keys(targets).filter((n) => n.startsWith('gateway_'))) {
    const { profile } = await profiled(() => saturate(platform, targets[name], params.connections, params.round_s));
    if (params.profile_dir) {
      require('node:fs').mkdirSync(params.profile_dir, { recursive: true });
      const file = require('node:path').join(params.profile_dir, `${name}.cpuprofile`);
      require('node:fs').writeFileSync(file, JSON.stringify(profile));
    }
    costs[name] = costsPerRequest(sharesByCheck(profile), saturated.sides[name].cpu_us_per_request.this_process);
  }
  return costs;
}

/**
 * Latency at half load: for each gateway, half of its saturated throughput, sent open loop to it
 * and, at the same rate, straight to the catalog, the two taking turns in rounds.
 */
async function halfLoad(targets, saturated, params) {
  const result = {};
  for (const name of Object.keys(targets).filter((n) => n !== 'direct')) {
    const rate = Math.max(1, Math.floor(saturated.sides[name].rps / 2));
    const names = [name, 'direct'];
    const runs = await inRounds(names, params.rounds, (side) =>
      fixedRate(targets[side], rate, params.half_load_s, params.slowest),
    );
    const side = (s) => {
      const all = runs[s];
      const sent = all.reduce((sum, run) => sum + run.sent, 0);
      const seconds = all.reduce((sum, run) => sum + run.seconds, 0);
      return {
        sent,
        answered_2xx: all.reduce((sum, run) => sum + run.latencies.length, 0),
        achieved_rps: round(sent / seconds, 1),
        latency_ms: percentiles(all.flatMap((run) => run.latencies)),
        send_lag_ms: percentiles(all.flatMap((run) => run.lags)),
        errors: all.reduce((sum, run) => sum + run.failures.errors, 0),
        non_2xx: all.reduce((sum, run) => sum + run.failures.non_2xx, 0),
        first_failure: all.find((run) => run.failures.first)?.failures.first ?? null,
        ...(params.slowest && {
          // Wall-clock times, to set beside GC traces, PostgreSQL's checkpoint log and the like.
          runs: all.map((run) => run.window),
          slowest: all
            .flatMap((run) => run.slowest)
            .sort((a, b) => b.latency_ms - a.latency_ms)
            .slice(0, params.slowest),
          this_process_stalls: all.flatMap((run) => run.stalls),
          machine_tcp_by_run: all.map((run) => run.machine_tcp),
        }),
      };
    };
    const withRateKept = (s) => {
      const measured = side(s);
      // Every request left within one interval (or 20 ms) of its due time: the rate was offered.
      return { ...measured, rate_kept: measured.send_lag_ms.p99 <= Math.max(20, 1000 / rate) };
    };
    const gateway = withRateKept(name);
    const direct = withRateKept('direct');
    result[name] = {
      rate_per_s: rate,
      gateway,
      direct,
      p50_added_ms: round(gateway.latency_ms.p50 - direct.latency_ms.p50, 1),
      p99_added_ms: round(gateway.latency_ms.p99 - direct.latency_ms.p99, 1),
    };
  }
  return result;
}

async function main() {
  const startedAt = new Date().toISOString();
  const params = readParameters();
  const platform = await startPlatform(params);
  try {
    const targets = await seed(platform);
    for (const [name, target] of Object.entries(targets)) await checkTarget(name, target);
    const saturated = await saturation(platform, targets, params);
    const checks = await checkCosts(platform, targets, saturated, params);
    const half = await halfLoad(targets, saturated, params);
    const failed =
      Object.values(saturated.sides).some((side) => side.failed > 0) ||
      Object.values(half).some((h) => [h.gateway, h.direct].some((s) => s.errors + s.non_2xx > 0));
    return {
      benchmark: 'gateway-vs-direct-list-products',
      started_at: startedAt,
      valid: !failed,
      mode: process.env.DATABASE_URL ? 'postgres' : 'embedded',
      machine: machine(),
      parameters: params,
      saturation: saturated,
      ...(checks && { gateway_cpu_us_by_check: checks }),
      half_load: half,
    };
  } finally {
    await stopPlatform(platform, 'gateway');
  }
}

runBenchmark('gateway', main, (signal) => {
  interrupted = signal;
  child?.kill(); // the pending run fails, and main's finally shuts everything down
});
