// `npm start -w @billing/example-analytics-mrr`: prints MRR and churn every 10 seconds.
// KAFKA_BROKERS (required), ASYNCAPI (path of asyncapi.json), KAFKA_TOPIC_PREFIX, ORGANIZATION.
import { join } from 'node:path';
import { startAnalyticsConsumer } from './consumer';
import { EventContract } from './contract';

async function main() {
  const brokers = (process.env.KAFKA_BROKERS ?? '').split(',').filter(Boolean);
  if (brokers.length === 0) throw new Error('KAFKA_BROKERS is required');
  const contract = EventContract.fromFile(
    process.env.ASYNCAPI ?? join(__dirname, '..', '..', '..', 'docs', 'asyncapi.json'),
  );
  const consumer = await startAnalyticsConsumer({
    brokers,
    groupId: process.env.GROUP_ID ?? 'analytics-mrr',
    contract,
    topicPrefix: process.env.KAFKA_TOPIC_PREFIX,
    organization: process.env.ORGANIZATION,
  });
  const timer = setInterval(() => process.stdout.write(`${JSON.stringify(consumer.ledger.report())}\n`), 10_000);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      clearInterval(timer);
      void consumer.stop();
    });
  }
}

main().catch((error) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
