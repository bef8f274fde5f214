'use strict';
// Requests per second and latency of GET /v1/products through the gateway, beside the same
// request sent straight to the catalog, in the same run with autocannon. Prints one JSON
// object to stdout; see README.md.
const os = require('node:os');
const { execFile } = require('node:child_process');
const { createInfrastructure, runService } = require('@billing/runtime');
const { signInternalCall } = require('@billing/contracts');
const { catalogService } = require('@billing/catalog');
const { createGatewayService } = require('@billing/gateway');
const { positiveSetting } = require('../settings');
const {
  adminPost,
  internalSecret,
  randomName: random,
  runBenchmark,
  serviceLogger: logger,
  stopPlatform,
} = require('../platform');

const AUTOCANNON = require.resolve('autocannon/autocannon.js');
const PRODUCTS = 20;

const readParameters = () => ({
  duration_s: positiveSetting('duration', 'BENCH_DURATION', 10),
  connections: positiveSetting('connections', 'BENCH_CONNECTIONS', 16),
  warmup_s: positiveSetting('warmup', 'BENCH_WARMUP', 2),
  products: PRODUCTS,
});

const round = (n, digits = 3) => Number(n.toFixed(digits));

/** Catalog and gateway on loopback port 0, each in a schema of its own, on one infrastructure. */
async function startPlatform() {
  const env = { DATABASE_URL: process.env.DATABASE_URL, DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE };
  const infrastructure = await createInfrastructure({ clientId: 'bench-gateway', dataDir: 'memory', env });
  const platform = { infrastructure, services: [], schemas: [], adminToken: random('adm') };
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
    platform.services.unshift(service); // stopped in reverse order: gateway first
    return service;
  };
  try {
    platform.catalog = await start(catalogService, {});
    platform.gateway = await start(createGatewayService(), {
      ADMIN_TOKEN: platform.adminToken,
      CATALOG_SERVICE_URL: platform.catalog.url,
      // Lifts the per-key limit (120/min in Sandbox) so the run measures the gateway, not its 429s.
      RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000000',
    });
  } catch (error) {
    await stopPlatform(platform, 'gateway');
    throw error;
  }
  return platform;
}

/** One organization with PRODUCTS Sandbox plans; returns the headers of both sides. */
async function seed(platform) {
  const organization = await adminPost(platform, '/organizations', { name: 'Bench' });
  for (let i = 0; i < PRODUCTS; i++) {
    const product = { environment: 'SANDBOX', name: `Plan ${i}`, type: 'SUBSCRIPTION', interval: 'month', price: 299 };
    await adminPost(platform, `/organizations/${organization.id}/products`, product);
  }
  const identity = { organization: organization.id, environment: 'SANDBOX', keyKind: 'secret', keyId: 'key_bench' };
  return {
    gateway: {
      url: `${platform.gateway.url}/v1/products`,
      headers: { authorization: `Bearer ${organization.api_keys.sandbox.secret_key}` },
    },
    direct: {
      url: `${platform.catalog.url}/v1/products`,
      // Signed as the gateway signs, afresh for each run: a signature is good for a minute.
      get headers() {
        return signInternalCall(internalSecret, { scope: 'key', method: 'GET', path: '/v1/products', identity });
      },
    },
  };
}

/** Both sides must answer 200 with every product before anything is measured. */
async function checkTarget(name, { url, headers }) {
  const response = await fetch(url, { headers });
  const body = await response.json();
  if (response.status !== 200 || body.data?.length !== PRODUCTS) {
    throw new Error(`${name}: expected 200 with ${PRODUCTS} products, got ${response.status} ${JSON.stringify(body)}`);
  }
}

/** autocannon in a child process, so the load generator does not share the services' event loop. */
let child;
let interrupted;
function autocannon({ url, headers }, connections, seconds) {
  if (interrupted) return Promise.reject(new Error(`interrupted by ${interrupted}`));
  const args = [AUTOCANNON, '--json', '-c', String(connections), '-d', String(seconds)];
  for (const [name, value] of Object.entries(headers)) args.push('-H', `${name}=${value}`);
  return new Promise((resolve, reject) => {
    child = execFile(process.execPath, [...args, url], { maxBuffer: 16 << 20 }, (error, stdout) => {
      child = undefined;
      if (error) reject(interrupted ? new Error(`interrupted by ${interrupted}`) : error);
      else resolve(JSON.parse(stdout.trim().split('\n').pop()));
    });
  });
}

const summary = (r) => ({
  requests: r.requests.total,
  rps: round(r.requests.average, 1),
  latency_p50_ms: r.latency.p50,
  latency_p99_ms: r.latency.p99,
  errors: r.errors,
  timeouts: r.timeouts,
  non_2xx: r.non2xx,
});

async function measure(target, params) {
  await autocannon(target, params.connections, params.warmup_s);
  return summary(await autocannon(target, params.connections, params.duration_s));
}

const ratios = (gateway, direct) => ({
  rps_gateway_over_direct: round(gateway.rps / direct.rps),
  p50_added_ms: round(gateway.latency_p50_ms - direct.latency_p50_ms),
  p50_gateway_over_direct: round(gateway.latency_p50_ms / direct.latency_p50_ms),
  p99_added_ms: round(gateway.latency_p99_ms - direct.latency_p99_ms),
  p99_gateway_over_direct: round(gateway.latency_p99_ms / direct.latency_p99_ms),
});

async function main() {
  const startedAt = new Date().toISOString();
  const params = readParameters();
  const platform = await startPlatform();
  try {
    const targets = await seed(platform);
    for (const [name, target] of Object.entries(targets)) await checkTarget(name, target);
    const gateway = await measure(targets.gateway, params);
    const direct = await measure(targets.direct, params);
    const failed = [gateway, direct].some((side) => side.errors || side.timeouts || side.non_2xx);
    return {
      benchmark: 'gateway-vs-direct-list-products',
      started_at: startedAt,
      valid: !failed,
      mode: process.env.DATABASE_URL ? 'postgres' : 'embedded',
      node_version: process.version,
      cpu_count: os.cpus().length,
      cpu_model: os.cpus()[0]?.model,
      parameters: params,
      gateway,
      direct,
      ratios: ratios(gateway, direct),
    };
  } finally {
    await stopPlatform(platform, 'gateway');
  }
}

runBenchmark('gateway', main, (signal) => {
  interrupted = signal;
  child?.kill(); // the pending run fails, and main's finally shuts everything down
});
