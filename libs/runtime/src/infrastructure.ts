import { join } from 'node:path';
import { type Bus, DatabaseBus, KafkaBus } from '@billing/bus';
import { type Database, pgliteDatabase, postgresDatabase } from '@billing/eventstore';
import { positiveNumberSetting } from './settings';

/** The servers every service of one process shares. */
export interface Infrastructure {
  mode: 'embedded' | 'distributed';
  database: Database;
  bus: Bus;
  close(): Promise<void>;
}

export interface InfrastructureOptions {
  /** Embedded data directory; `memory` keeps nothing. Defaults to ./.data/pglite. */
  dataDir?: string;
  clientId: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * `DATABASE_URL` and `KAFKA_BROKERS` select real servers; without them everything runs in
 * the process: PGlite under ./.data, and the bus in its tables (`DatabaseBus`), so that a
 * crash loses no message. Each can be chosen on its own: without Kafka the bus lives in the
 * database, PGlite or PostgreSQL.
 */
export async function createInfrastructure(options: InfrastructureOptions): Promise<Infrastructure> {
  const env = options.env ?? process.env;
  const database = env.DATABASE_URL
    ? postgresDatabase({ connectionString: env.DATABASE_URL, max: Number(env.DATABASE_POOL_SIZE ?? 10) })
    : await pgliteDatabase(embeddedDataDir(options.dataDir ?? pgliteDirOf(env.DATA_DIR)));
  const bus: Bus = env.KAFKA_BROKERS
    ? new KafkaBus({
        brokers: env.KAFKA_BROKERS.split(','),
        clientId: options.clientId,
        topicPrefix: env.KAFKA_TOPIC_PREFIX,
        sessionTimeoutMs: positiveNumberSetting(env, 'KAFKA_SESSION_TIMEOUT_MS', 10_000),
      })
    : new DatabaseBus(database, { topicPrefix: env.KAFKA_TOPIC_PREFIX });
  return {
    mode: env.DATABASE_URL || env.KAFKA_BROKERS ? 'distributed' : 'embedded',
    database,
    bus,
    async close() {
      await bus.close();
      await database.close();
    },
  };
}

/** `DATA_DIR` is the data root, as for `npm start`: PGlite keeps its files in `DATA_DIR/pglite`. */
function pgliteDirOf(dataDir: string | undefined): string | undefined {
  return dataDir === undefined || dataDir === 'memory' ? dataDir : join(dataDir, 'pglite');
}

function embeddedDataDir(dataDir: string | undefined): string | undefined {
  if (dataDir === 'memory') return undefined;
  return dataDir ?? join(process.cwd(), '.data', 'pglite');
}
