import { PROMOTIONS_PUBLIC_EVENTS } from '@billing/contracts';
import type { ServiceDefinition } from '@billing/runtime';
import { migrateCouponsReadModel } from './coupons/read-model';
import { mountCouponRoutes } from './coupons/routes';
import { migratePromotionCodesReadModel } from './promotion-codes/read-model';
import { mountPromotionCodeRoutes } from './promotion-codes/routes';
import { startConsumers } from './replicas/consumer';
import { migrateReplicas } from './replicas/read-model';
import { mountValidationRoutes } from './validation/routes';
import { requireAdminOrganization, requireCaller } from '@billing/service';

/** The promotions service: coupons, promotion codes, validation, redemptions. */
export const promotionsService: ServiceDefinition = {
  name: 'promotions',
  defaultPort: 4104,
  publicEvents: PROMOTIONS_PUBLIC_EVENTS,
  routes: (app, context) => {
    app.use('/v1', requireCaller);
    app.use('/internal', requireCaller);
    app.use('/admin', requireAdminOrganization);
    mountCouponRoutes(app, context);
    // Before `/v1/promotion-codes/:id`, though no method of that path is POST.
    mountValidationRoutes(app, context);
    mountPromotionCodeRoutes(app, context);
  },
  // Read models exist before HTTP starts and before the consumers write to them.
  start: async (context) => {
    await migrateCouponsReadModel(context.store);
    await migratePromotionCodesReadModel(context.store);
    await migrateReplicas(context.store);
    return startConsumers(context);
  },
};
