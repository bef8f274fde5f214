import type { ServiceDefinition } from '@billing/runtime';

/** The gateway service: API keys to organization and environment, rate limits, routing to the services, circuit breakers. */
export const gatewayService: ServiceDefinition = {
  name: 'gateway',
  defaultPort: 4000,
};
