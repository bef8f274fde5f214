'use strict';
// Billing in a process of its own, as in the distributed topology (docker-compose.yml): forked by
// run.js with an IPC channel (`--topology=billing-process`), on the parent's PostgreSQL and Kafka
// topics, in the schema and with the config the parent gives in BENCH_BILLING (JSON). It sends
// `{ url }` once it listens; then answers `report` with its CPU time and the statements it sent,
// and `stop` by shutting down and exiting (the parent drops the schema).
const { createInfrastructure, runService } = require('@billing/runtime');
const { billingService } = require('@billing/billing');
const { serviceLogger } = require('../platform');
const { countStatements } = require('../statements');

async function main() {
  const { schema, config, internalSecret, topicPrefix } = JSON.parse(process.env.BENCH_BILLING);
  const env = {
    DATABASE_URL: process.env.DATABASE_URL,
    KAFKA_BROKERS: process.env.KAFKA_BROKERS,
    KAFKA_TOPIC_PREFIX: topicPrefix,
    DATABASE_POOL_SIZE: process.env.DATABASE_POOL_SIZE,
  };
  const infrastructure = await createInfrastructure({ clientId: 'bench-credits-billing', dataDir: 'memory', env });
  const counts = countStatements(infrastructure.database);
  const billing = await runService(billingService, infrastructure, {
    port: 0,
    schema,
    config,
    internalSecret,
    logger: serviceLogger('billing'),
  });
  let stopping;
  const stop = () => (stopping ??= shutDown());
  const shutDown = async () => {
    await billing.shutdown().catch((error) => console.error('billing process: shutdown failed:', error));
    await infrastructure.close();
    if (process.connected) process.disconnect();
  };
  process.on('message', (message) => {
    if (message === 'report') {
      const { statements, roundTrips, transactions } = counts;
      process.send({ report: { cpu: process.cpuUsage(), statements, roundTrips, transactions } });
    }
    if (message === 'stop') void stop();
  });
  process.once('disconnect', () => void stop());
  process.once('SIGTERM', () => void stop());
  process.send({ url: billing.url });
}

// Ctrl-C reaches the whole process group: the parent, interrupted, says when to stop.
process.on('SIGINT', () => {});

main().catch((error) => {
  console.error('billing process failed:', error);
  process.exit(1);
});
