import { createLogger } from '@billing/service';
import { createInfrastructure, type Infrastructure } from './infrastructure';
import { type RunningService, type ServiceDefinition, runService } from './run-service';

/** A service on port 0 over an in-memory PGlite and the in-process bus, for HTTP tests. */
export async function startServiceForTest(
  definition: ServiceDefinition,
): Promise<{ service: RunningService; infrastructure: Infrastructure; stop: () => Promise<void> }> {
  const infrastructure = await createInfrastructure({
    clientId: `${definition.name}-test`,
    dataDir: 'memory',
    env: {},
  });
  const logger = createLogger(definition.name, { level: process.env.LOG_LEVEL ?? 'silent' });
  const service = await runService(definition, infrastructure, { port: 0, logger });
  return {
    service,
    infrastructure,
    stop: async () => {
      await service.shutdown();
      await infrastructure.close();
    },
  };
}
