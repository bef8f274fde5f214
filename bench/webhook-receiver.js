'use strict';
// A webhook receiver for the benchmarks: verifies every signature with its endpoint's secret
// and notes when each event first arrived at each endpoint.
const http = require('node:http');
const { createHmac, timingSafeEqual } = require('node:crypto');

/** Standard Webhooks: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` keyed with the secret after `whsec_`. */
function signatureValid(secret, headers, body) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`)
    .digest();
  return String(headers['webhook-signature'] ?? '')
    .split(' ')
    .some((part) => {
      const given = Buffer.from(part.replace(/^v1,/, ''), 'base64');
      return part.startsWith('v1,') && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

/**
 * Answers 200 and notes when each event (by its session id) arrived at each endpoint, after
 * checking its signature with that endpoint's secret (`secrets`, by path).
 */
async function startReceiver() {
  const secrets = new Map();
  const arrivals = new Map();
  /** First arrival of each session at any endpoint, in ms since the epoch (to compare with another process). */
  const epochArrivals = new Map();
  const rejected = { bad_signature: 0, first: null };
  let verified = 0;
  let onArrival = () => undefined;
  let abort = () => undefined;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const body = Buffer.concat(chunks).toString('utf8');
      if (!signatureValid(secrets.get(req.url) ?? '', req.headers, body)) {
        rejected.bad_signature++;
        rejected.first ??= `${req.url}: ${req.headers['webhook-signature']}`;
        res.writeHead(400).end();
        return;
      }
      verified++;
      const sessionId = JSON.parse(body).data.object.id;
      const arrivedAt = performance.timeOrigin + at;
      const key = `${req.url} ${sessionId}`;
      if (!arrivals.has(key)) arrivals.set(key, at);
      if (!epochArrivals.has(sessionId)) epochArrivals.set(sessionId, arrivedAt);
      res.writeHead(200).end();
      onArrival();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: (path) => `http://127.0.0.1:${server.address().port}${path}`,
    secrets,
    arrivals,
    epochArrivals,
    rejected,
    verified: () => verified,
    /** Fails the pending wait (Ctrl-C), so that the benchmark's cleanup runs. */
    abort: (reason) => abort(reason),
    waitFor: (count, timeoutMs) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${arrivals.size} of ${count} deliveries arrived`)), timeoutMs);
        abort = (reason) => (clearTimeout(timer), reject(new Error(`interrupted by ${reason}`)));
        onArrival = () => {
          if (arrivals.size >= count) {
            clearTimeout(timer);
            resolve();
          }
        };
        onArrival();
      }),
    close: () => new Promise((resolve) => (server.closeAllConnections(), server.close(resolve))),
  };
}

module.exports = { startReceiver, signatureValid };
