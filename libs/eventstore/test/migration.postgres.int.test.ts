import { describeWithServer, uniqueName } from '@billing/testing';
import { EventStore, postgresDatabase } from '../src';

/** Rounds of the race: one start rarely loses it, a few dozen nearly always did. */
const ROUNDS = 15;

describeWithServer('DATABASE_URL', 'Migrations of replicas starting together on PostgreSQL', (url) => {
  const database = postgresDatabase({ connectionString: url, max: 6 });
  const schemas: string[] = [];

  afterAll(async () => {
    for (const schema of schemas) await database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await database.close();
  });

  it('migrates one fresh schema from three replicas at once, every one succeeding', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const schema = uniqueName('migrate_race');
      schemas.push(schema);
      const replicas = [1, 2, 3].map(() => new EventStore(database, { schema }));
      await Promise.all(replicas.map((store) => store.migrate()));
    }
    const { rows } = await database.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM information_schema.tables WHERE table_schema = $1`,
      [schemas[0]],
    );
    expect(rows[0]!.count).toBe(4);
  });

  it('runs read-model migrations of the schema under the same lock as the event store, quoted name or not', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const schema = uniqueName('migrate_read_model');
      schemas.push(schema);
      const replicas = [1, 2, 3].map(() => new EventStore(database, { schema }));
      await Promise.all(
        replicas.map(async (store) => {
          const readModel = store.migrateSchema(`
            CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};
            CREATE TABLE IF NOT EXISTS ${store.tables.schema}.things (id text PRIMARY KEY)`);
          await Promise.all([store.migrate(), readModel]);
        }),
      );
    }
  });
});
