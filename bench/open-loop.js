'use strict';
// An open-loop load generator: sends requests at a fixed rate whether or not earlier ones have
// answered (a closed loop slows down with the server and hides its queue). Each latency runs
// from the moment the request was due, so a generator that falls behind counts against the
// server rather than hiding it; how far it fell behind is reported (`send_lag_ms`).
// Runs in a child process of its own: `node open-loop.js '<json settings>'` prints JSON.
const http = require('node:http');

/**
 * Latencies in ms of every answered request, and the failures, of one fixed-rate run; with
 * `slowest` > 0 also the slowest answered requests, each with the wall-clock time it was due.
 */
function run({ url, method = 'GET', headers = {}, body, rate, seconds, timeoutMs = 10_000, slowest = 0 }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const total = Math.max(1, Math.round(rate * seconds));
  const interval = 1000 / rate;
  const latencies = [];
  const lags = [];
  const dueTimes = slowest > 0 ? [] : undefined; // beside `latencies`, index for index
  const failures = { errors: 0, non_2xx: 0, first: null };
  let settled = 0;
  return new Promise((resolve) => {
    const started = performance.now();
    const done = () => {
      if (++settled < total) return;
      agent.destroy();
      const result = { sent: total, latencies, lags, failures, seconds: (performance.now() - started) / 1000 };
      if (dueTimes) result.slowest = slowestOf(latencies, dueTimes, slowest);
      resolve(result);
    };
    const send = (dueAt) => {
      lags.push(performance.now() - dueAt);
      const req = http.request(url, { method, headers, agent, timeout: timeoutMs }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode >= 200 && res.statusCode < 300) {
            latencies.push(performance.now() - dueAt);
            dueTimes?.push(dueAt);
          } else {
            failures.non_2xx++;
            failures.first ??= `status ${res.statusCode}`;
          }
          done();
        });
      });
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', (error) => {
        failures.errors++;
        failures.first ??= String(error.message);
        done();
      });
      req.end(body);
    };
    let next = 0;
    const tick = () => {
      const now = performance.now();
      while (next < total && started + next * interval <= now) send(started + next++ * interval);
      if (next < total) setTimeout(tick, Math.max(0, started + next * interval - performance.now()));
    };
    tick();
  });
}

/** The `n` slowest requests: when each was due (ISO, wall clock) and its latency in ms. */
function slowestOf(latencies, dueTimes, n) {
  const order = latencies.map((_, i) => i).sort((a, b) => latencies[b] - latencies[a]);
  return order.slice(0, n).map((i) => ({
    due_at: new Date(performance.timeOrigin + dueTimes[i]).toISOString(),
    latency_ms: Number(latencies[i].toFixed(1)),
  }));
}

if (require.main === module) {
  run(JSON.parse(process.argv[2])).then((result) => process.stdout.write(JSON.stringify(result)));
}

module.exports = { run };
