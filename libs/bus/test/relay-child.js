// A relay in its own process, for the crash tests: with RELAY_KILL_AFTER_PUBLISH=1 it kills
// itself with SIGKILL after the broker acknowledged a batch and before the checkpoint is saved;
// with RELAY_FOLLOW=1 it runs (holding the log's relay lock) until the test kills it.
const { EventStore, postgresDatabase } = require('@billing/eventstore');
const { EventRelay, KafkaBus } = require('../dist');

async function main() {
  const { DATABASE_URL, KAFKA_BROKERS, RELAY_SCHEMA, RELAY_TOPIC, RELAY_KILL_AFTER_PUBLISH, RELAY_FOLLOW } =
    process.env;
  const database = postgresDatabase(DATABASE_URL);
  const store = new EventStore(database, { schema: RELAY_SCHEMA });
  const bus = new KafkaBus({ brokers: KAFKA_BROKERS.split(','), clientId: 'relay-child' });
  const relay = new EventRelay(store, bus, {
    topic: RELAY_TOPIC,
    afterPublish: () => {
      if (RELAY_KILL_AFTER_PUBLISH === '1') process.kill(process.pid, 'SIGKILL');
    },
  });
  if (RELAY_FOLLOW === '1') {
    relay.start();
    return;
  }
  const published = await relay.catchUp();
  process.stdout.write(`published ${published}\n`);
  await bus.close();
  await database.close();
}

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exit(1);
});
