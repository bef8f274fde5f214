'use strict';
// What each of the gateway's checks costs per request: this process's CPU sampled by V8's
// profiler (node:inspector) during one saturation run, each sample counted against the check
// whose code is nearest the top of its stack. Used by run.js; see README.md.
const inspector = require('node:inspector/promises');

/**
 * Checks by where their code lives, tried in order against each frame of a sample's stack, from
 * the top: node's own functions (the HTTP parser, socket writes) count against the nearest check
 * that called them, and those no check called against `http_server_and_client`.
 */
const CHECKS = [
  ['api_key', /services\/gateway\/dist\/(auth|organizations)\//],
  ['rate_limit', /services\/gateway\/dist\/rate-limit\//],
  ['idempotency', /services\/gateway\/dist\/idempotency\//],
  ['admission', /services\/gateway\/dist\/admission\//],
  ['cors', /services\/gateway\/dist\/cors\//],
  ['identity_signing', /services\/gateway\/dist\/routing\/identity-headers|libs\/signing\/dist\//],
  ['logging', /libs\/service\/dist\/context\.js|node_modules\/(pino|sonic-boom)\//],
  ['metrics', /libs\/service\/dist\/metrics\.js|node_modules\/prom-client\//],
  // Express's request and response helpers (req.get, res.set) count against the check calling them.
  [
    'routing',
    /services\/gateway\/dist\/routing\/|node_modules\/(router|path-to-regexp|parseurl)\/|node_modules\/express\/lib\/(application|express)\.js/,
  ],
  ['forwarding', /services\/gateway\/dist\/upstream\/|libs\/runtime\/dist\/isolated-breaker|node_modules\/opossum\//],
  ['dashboard_identity', /services\/gateway\/dist\/dashboard\//],
];

/** The checks the budget counts: what the gateway does beyond forwarding. */
const OWN_CHECKS = CHECKS.map(([check]) => check).filter((check) => check !== 'forwarding');

/** Runs `work` with this process's CPU profiled; the profile beside what `work` returned. */
async function profiled(work) {
  const session = new inspector.Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
    const outcome = await work().then(
      (value) => ({ value }),
      (error) => ({ error }),
    );
    const { profile } = await session.post('Profiler.stop');
    if ('error' in outcome) throw outcome.error;
    return { result: outcome.value, profile };
  } finally {
    session.disconnect();
  }
}

/** The share of the sampled CPU (idle left out) that each check took, and garbage collection's. */
function sharesByCheck(profile) {
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const parents = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const checkOf = new Map();
  const resolve = (id) => {
    if (checkOf.has(id)) return checkOf.get(id);
    const { callFrame } = nodes.get(id);
    let check = CHECKS.find(([, where]) => where.test(callFrame.url))?.[0];
    if (!check && callFrame.functionName === '(garbage collector)') check = 'garbage_collection';
    if (!check && callFrame.functionName === '(idle)') check = 'idle';
    if (!check) check = parents.has(id) ? resolve(parents.get(id)) : 'http_server_and_client';
    checkOf.set(id, check);
    return check;
  };
  const spent = {};
  let total = 0;
  profile.samples.forEach((id, i) => {
    const check = resolve(id);
    if (check === 'idle') return;
    const us = profile.timeDeltas[i] ?? 0;
    spent[check] = (spent[check] ?? 0) + us;
    total += us;
  });
  return Object.fromEntries(Object.entries(spent).map(([check, us]) => [check, total ? us / total : 0]));
}

/**
 * Each check's CPU microseconds per request: its share of the profiled run's samples times the
 * gateway's CPU per request measured without the profiler.
 */
function costsPerRequest(shares, cpuUsPerRequest) {
  const byCheck = Object.fromEntries(
    Object.entries(shares)
      .sort(([, a], [, b]) => b - a)
      .map(([check, share]) => [check, Math.round(share * cpuUsPerRequest)]),
  );
  const ownChecks = OWN_CHECKS.reduce((sum, check) => sum + (byCheck[check] ?? 0), 0);
  return { by_check_us: byCheck, own_checks_us: ownChecks };
}

module.exports = { OWN_CHECKS, costsPerRequest, profiled, sharesByCheck };
