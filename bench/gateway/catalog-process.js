'use strict';
// The catalog in a process of its own, as in the distributed topology (docker-compose.yml): forked
// by run.js with an IPC channel, on PostgreSQL (DATABASE_URL) in a fresh schema. It sends
// `{ url }` once it listens; then answers `cpu` with its CPU time, and `stop` by shutting down,
// dropping its schema and exiting.
const { createInfrastructure, runService } = require('@billing/runtime');
const { catalogService } = require('@billing/catalog');
const { randomName, serviceLogger } = require('../platform');

async function main() {
  const internalSecret = process.env.BENCH_INTERNAL_SECRET;
  const env = { DATABASE_URL: process.env.DATABASE_URL, DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE };
  const infrastructure = await createInfrastructure({ clientId: 'bench-gateway-catalog', dataDir: 'memory', env });
  const schema = randomName('bench_catalog');
  const catalog = await runService(catalogService, infrastructure, {
    port: 0,
    schema,
    config: {},
    internalSecret,
    logger: serviceLogger('catalog'),
  });
  let stopping;
  const stop = () => (stopping ??= shutDown());
  const shutDown = async () => {
    await catalog.shutdown().catch((error) => console.error('catalog process: shutdown failed:', error));
    await infrastructure.database
      .exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
      .catch((error) => console.error('catalog process: dropping its schema failed:', error));
    await infrastructure.close();
    if (process.connected) process.disconnect();
  };
  process.on('message', (message) => {
    if (message === 'cpu') process.send({ cpu: process.cpuUsage() });
    if (message === 'stop') void stop();
  });
  // The parent went away without saying stop (killed): clean up all the same.
  process.once('disconnect', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.send({ url: catalog.url });
}

// Ctrl-C reaches the whole process group: the parent, interrupted, says when to stop.
process.on('SIGINT', () => {});

main().catch((error) => {
  console.error('catalog process failed:', error);
  process.exit(1);
});
