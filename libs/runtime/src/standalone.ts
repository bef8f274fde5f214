import { createLogger, exitOnSignals } from '@billing/service';
import { createInfrastructure } from './infrastructure';
import { type ServiceDefinition, runService } from './run-service';

/** Where each service listens when it runs alone with its default port. */
export const DEFAULT_SERVICE_URLS = {
  CATALOG_SERVICE_URL: 'http://127.0.0.1:4101',
  CHECKOUT_SERVICE_URL: 'http://127.0.0.1:4102',
  BILLING_SERVICE_URL: 'http://127.0.0.1:4103',
  PROMOTIONS_SERVICE_URL: 'http://127.0.0.1:4104',
  NOTIFICATIONS_SERVICE_URL: 'http://127.0.0.1:4105',
} as const;

/** A lone service's settings: the environment, and the other services at their default ports unless it names them. */
export const standaloneConfig = (env: NodeJS.ProcessEnv): Record<string, string | undefined> => ({
  ...DEFAULT_SERVICE_URLS,
  ...env,
});

/** Runs one service alone in its process, as one container of the distributed topology does. */
export async function runStandalone(definition: ServiceDefinition): Promise<void> {
  const logger = createLogger(definition.name);
  const infrastructure = await createInfrastructure({ clientId: definition.name });
  const running = await runService(definition, infrastructure, {
    port: Number(process.env.PORT ?? definition.defaultPort),
    host: process.env.HOST,
    logger,
    config: standaloneConfig(process.env),
  });
  exitOnSignals({ ...running, shutdown: () => running.shutdown().finally(() => infrastructure.close()) }, logger);
}
