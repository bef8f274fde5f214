import type { ServiceDefinition } from '@billing/runtime';

/** The promotions service: coupons, promotion codes, validation, redemptions. */
export const promotionsService: ServiceDefinition = {
  name: 'promotions',
  defaultPort: 4104,
};
