import type { ServiceDefinition } from '@billing/runtime';
import { migrateProductsReadModel } from './products/read-model';
import { mountProductRoutes } from './products/routes';

/** The catalog service: products. */
export const catalogService: ServiceDefinition = {
  name: 'catalog',
  defaultPort: 4101,
  routes: mountProductRoutes,
  // Read models are created before HTTP starts, so the first request finds its table.
  start: async ({ store }) => {
    await migrateProductsReadModel(store);
    return [];
  },
};
