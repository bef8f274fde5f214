import type { ServiceDefinition } from '@billing/runtime';

/** The billing service: customers, subscriptions, plan switches and proration, renewals, invoices, portal, entitlements. */
export const billingService: ServiceDefinition = {
  name: 'billing',
  defaultPort: 4103,
};
