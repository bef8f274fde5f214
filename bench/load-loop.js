'use strict';
// What the benches' load generators share (bench/checkout/buyers.js, bench/credits/spenders.js):
// POSTs on kept-alive node:http connections, as a lean load tool sends them (fetch cost about
// three times the CPU per request), and the closed and open loops that drive `one(i, dueAt)`.
const http = require('node:http');

/** A POST function on its own kept-alive agent: answers `{ status, text }`; `destroy` closes its sockets. */
function keptAlivePoster(maxSockets) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const post = (url, headers, body) =>
    new Promise((resolve, reject) => {
      const request = http.request(
        url,
        { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
        (response) => {
          const chunks = [];
          response.on('data', (chunk) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode, text: Buffer.concat(chunks).toString() }));
          response.on('error', reject);
        },
      );
      request.on('error', reject);
      request.end(body);
    });
  return { post, destroy: () => agent.destroy() };
}

/**
 * Runs `one(i, dueAt)` for i in 0..count-1: closed loop (`concurrency` at a time, each starting
 * the next when its last is done) or, with `rate`, open loop (one every 1/rate s whether or not
 * earlier ones are done; how late each was sent goes to `timings.send_lag`). A failure is
 * recorded in `timings.errors` and the run goes on.
 */
async function runLoop({ count, concurrency, rate }, timings, one) {
  const record = (error) => timings.errors.push(String(error.message ?? error));
  if (!rate) {
    let next = 0;
    const worker = async () => {
      while (next < count) await one(next++, performance.now()).catch(record);
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return;
  }
  const started = performance.now();
  const pending = [];
  let next = 0;
  await new Promise((resolve) => {
    const tick = () => {
      const now = performance.now();
      while (next < count && started + (next * 1000) / rate <= now) {
        const dueAt = started + (next * 1000) / rate;
        timings.send_lag.push(now - dueAt);
        pending.push(one(next++, dueAt).catch(record));
      }
      if (next < count) setTimeout(tick, Math.max(0, started + (next * 1000) / rate - performance.now()));
      else resolve();
    };
    tick();
  });
  await Promise.all(pending);
}

/** Runs the loop, then prints `timings` with its duration and the process's CPU since `atStart`. */
async function runAndReport(settings, timings, one, atStart) {
  const started = performance.now();
  await runLoop(settings, timings, one);
  timings.duration_ms = performance.now() - started;
  const cpu = process.cpuUsage(atStart);
  timings.cpu_ms = (cpu.user + cpu.system) / 1000;
  process.stdout.write(JSON.stringify(timings));
}

module.exports = { keptAlivePoster, runAndReport };
