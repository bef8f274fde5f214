import type { ServiceDefinition } from '@billing/runtime';

/** The catalog service: products. */
export const catalogService: ServiceDefinition = {
  name: 'catalog',
  defaultPort: 4101,
};
