import type { ServiceDefinition } from '@billing/runtime';
import { Gateway } from './gateway';

/**
 * The gateway: API keys to organization and environment, rate limits, routing to the services
 * behind circuit breakers, and the admin API. A factory, because each instance owns its own
 * connections (tests run several in one process).
 */
export function createGatewayService(): ServiceDefinition {
  let gateway: Gateway | undefined;
  return {
    name: 'gateway',
    defaultPort: 8080,
    // Public bodies go to the services unread, so each answers bad JSON with its own error code.
    parseJsonBodies: false,
    // The one service clients reach: it authenticates them and signs what it forwards.
    facesNetwork: true,
    start: async (context) => {
      gateway = await Gateway.create(context);
      return [() => gateway!.close()];
    },
    routes: (app) => gateway!.mount(app),
  };
}
