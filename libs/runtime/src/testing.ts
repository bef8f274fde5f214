import { randomBytes } from 'node:crypto';
import { createLogger } from '@billing/service';
import { createInfrastructure, type Infrastructure } from './infrastructure';
import { type RunningService, type RunServiceOptions, type ServiceDefinition, runService } from './run-service';

/**
 * Topics of their own for the services of one test file (jest loads this module once per
 * file): a new consumer group would otherwise read every earlier file's events first.
 */
const TEST_TOPIC_PREFIX = `test-${randomBytes(4).toString('hex')}.`;

/**
 * The internal secret of the services a test process starts: INTERNAL_SECRET when set, else one
 * made for the process (jest gives each test file its own `process.env`). `@billing/testing`'s
 * `signedFetch` reads the same variable, so tests can call services as the gateway would.
 */
export function testInternalSecret(): string {
  return (process.env.INTERNAL_SECRET ??= randomBytes(32).toString('base64url'));
}

/**
 * Infrastructure for tests: PostgreSQL and Kafka when DATABASE_URL and KAFKA_BROKERS are set
 * (as in CI), otherwise in-memory PGlite with the bus in it.
 */
export function testInfrastructure(clientId = 'test'): Promise<Infrastructure> {
  return createInfrastructure({
    clientId,
    dataDir: 'memory',
    env: {
      DATABASE_URL: process.env.DATABASE_URL,
      KAFKA_BROKERS: process.env.KAFKA_BROKERS,
      KAFKA_TOPIC_PREFIX: process.env.KAFKA_TOPIC_PREFIX ?? TEST_TOPIC_PREFIX,
    },
  });
}

export interface ServiceUnderTest {
  service: RunningService;
  infrastructure: Infrastructure;
  /** Shuts the service down and drops its schema; closes the infrastructure if it made it. */
  stop: () => Promise<void>;
}

/**
 * A service on port 0 in a schema of its own (so test files never share tables), on the given
 * infrastructure or on a new `testInfrastructure()`.
 */
export async function startServiceForTest(
  definition: ServiceDefinition,
  options: RunServiceOptions & { infrastructure?: Infrastructure } = {},
): Promise<ServiceUnderTest> {
  const { infrastructure: shared, ...runOptions } = options;
  const infrastructure = shared ?? (await testInfrastructure(`${definition.name}-test`));
  const schema = runOptions.schema ?? `${definition.name}_${randomBytes(5).toString('hex')}`;
  const logger = runOptions.logger ?? createLogger(definition.name, { level: process.env.LOG_LEVEL ?? 'silent' });
  const service = await runService(definition, infrastructure, {
    port: 0,
    internalSecret: testInternalSecret(),
    ...runOptions,
    schema,
    logger,
  });
  return {
    service,
    infrastructure,
    stop: async () => {
      await service.shutdown();
      await infrastructure.database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      if (!shared) await infrastructure.close();
    },
  };
}
