import type { ServiceDefinition } from '@billing/runtime';

/** The notifications service: webhook endpoints, domain event to webhook event, signing, dedupe, retries, delivery log. */
export const notificationsService: ServiceDefinition = {
  name: 'notifications',
  defaultPort: 4105,
};
