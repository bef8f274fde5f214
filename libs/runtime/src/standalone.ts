import { createLogger, exitOnSignals } from '@billing/service';
import { createInfrastructure } from './infrastructure';
import { type ServiceDefinition, runService } from './run-service';

/** Runs one service alone in its process, as one container of the distributed topology does. */
export async function runStandalone(definition: ServiceDefinition): Promise<void> {
  const logger = createLogger(definition.name);
  const infrastructure = await createInfrastructure({ clientId: definition.name });
  const running = await runService(definition, infrastructure, {
    port: Number(process.env.PORT ?? definition.defaultPort),
    host: process.env.HOST,
    logger,
    config: process.env,
  });
  exitOnSignals({ ...running, shutdown: () => running.shutdown().finally(() => infrastructure.close()) }, logger);
}
