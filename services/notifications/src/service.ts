import type { ServiceDefinition } from '@billing/runtime';
import type { Resolve } from './deliveries/send';
import { migrateDeliveriesReadModel } from './deliveries/read-model';
import { mountDeliveryRoutes } from './deliveries/routes';
import { type Scheduler, schedulerOptions, startScheduler } from './deliveries/scheduler';
import { migrateEndpointsReadModel } from './endpoints/read-model';
import { mountEndpointRoutes } from './endpoints/routes';
import { startEventConsumer } from './events/consumer';
import { requireAdminOrganization, requireCaller } from '@billing/service';

/**
 * The scheduler starts after the routes are mounted; the replay route wakes it through this
 * holder. Keyed by context, since tests run several instances in one process.
 */
const schedulers = new WeakMap<object, Scheduler>();

export interface NotificationsOptions {
  /** Resolves endpoint host names when sending (tests: names that resolve where they say). */
  resolve?: Resolve;
}

/** The notifications service: webhook endpoints, domain event to webhook event, signing, dedupe, retries, delivery log. */
export const createNotificationsService = (options: NotificationsOptions = {}): ServiceDefinition => ({
  name: 'notifications',
  defaultPort: 4105,
  routes: (app, context) => {
    app.use('/v1', requireCaller);
    app.use('/admin', requireAdminOrganization);
    mountEndpointRoutes(app, context, async () => schedulers.get(context)?.cancelOrphans());
    mountDeliveryRoutes(app, context, () => schedulers.get(context)?.wake());
  },
  // Read models exist before HTTP starts and before the consumer writes to them.
  start: async (context) => {
    await migrateEndpointsReadModel(context.store);
    await migrateDeliveriesReadModel(context.store);
    const scheduler = startScheduler(context, { ...schedulerOptions(context.config), resolve: options.resolve });
    schedulers.set(context, scheduler);
    const stopConsumer = await startEventConsumer(context, () => scheduler.wake());
    // The consumer stops first, so nothing is scheduled into a stopped sender.
    return [stopConsumer, () => scheduler.stop()];
  },
});

export const notificationsService: ServiceDefinition = createNotificationsService();

/** The running scheduler of a service instance (tests and the bench wait on it). */
export const schedulerOf = (context: object) => schedulers.get(context);
