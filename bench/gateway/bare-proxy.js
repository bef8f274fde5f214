'use strict';
// The floor a gateway is measured against: a bare keep-alive node:http reverse proxy in a
// process of its own, forwarding every request to BENCH_UPSTREAM as it came (no key, no limit,
// no log), forked by run.js with an IPC channel. It sends `{ url }` once it listens; then answers
// `cpu` with its CPU time, and `stop` by closing and exiting.
const http = require('node:http');

const upstream = new URL(process.env.BENCH_UPSTREAM);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

const server = http.createServer((req, res) => {
  const forwarded = http.request(
    { host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, agent },
    (answer) => {
      res.writeHead(answer.statusCode, answer.headers);
      answer.pipe(res);
    },
  );
  forwarded.on('error', () => res.writeHead(502).end());
  req.pipe(forwarded);
});
server.keepAliveTimeout = 65_000;

const stop = () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
};
process.on('message', (message) => {
  if (message === 'cpu') process.send({ cpu: process.cpuUsage() });
  if (message === 'stop') stop();
});
process.once('disconnect', stop);
// Ctrl-C reaches the whole process group: the parent, interrupted, says when to stop.
process.on('SIGINT', () => {});
server.listen(0, '127.0.0.1', () => process.send({ url: `http://127.0.0.1:${server.address().port}` }));
