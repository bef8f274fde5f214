import type { ServiceDefinition } from '@billing/runtime';

/** The checkout service: checkout sessions, payment links, orders, payment intents, hosted checkout page, sandbox payment processor. */
export const checkoutService: ServiceDefinition = {
  name: 'checkout',
  defaultPort: 4102,
};
