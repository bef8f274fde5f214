import type { ServiceDefinition } from '@billing/runtime';
import type { Resolve } from './deliveries/send';
import { migrateDeliveriesReadModel } from './deliveries/read-model';
import { mountDeliveryRoutes } from './deliveries/routes';
import { type Scheduler, schedulerOptions, startScheduler } from './deliveries/scheduler';
import { migrateEndpointsReadModel } from './endpoints/read-model';
import { mountEndpointRoutes } from './endpoints/routes';
import { startEventConsumer } from './events/consumer';
import { migrateEventsReadModel } from './events/read-model';
import { startEventPruning } from './events/retention';
import { mountEventRoutes } from './events/routes';
import { requireAdminOrganization, requireCaller } from '@billing/service';
import { migrateMerchants, startMerchantsConsumer } from '@billing/runtime';
import { startEmailConsumer } from './emails/consumer';
import { migrateEmailOutbox } from './emails/outbox';
import { mountEmailRoutes } from './emails/routes';
import { type EmailSender, startEmailSender } from './emails/sender';

/**
 * The scheduler starts after the routes are mounted; the replay route wakes it through this
 * holder. Keyed by context, since tests run several instances in one process.
 */
const schedulers = new WeakMap<object, Scheduler>();
const emailSenders = new WeakMap<object, EmailSender>();

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
    mountEventRoutes(app, context);
    mountEmailRoutes(app, context);
  },
  // Read models exist before HTTP starts and before the consumer writes to them.
  start: async (context) => {
    await migrateEndpointsReadModel(context.store);
    await migrateDeliveriesReadModel(context.store);
    await migrateEventsReadModel(context.store);
    await migrateEmailOutbox(context.store);
    await migrateMerchants(context.store);
    const scheduler = startScheduler(context, { ...schedulerOptions(context.config), resolve: options.resolve });
    schedulers.set(context, scheduler);
    const stopConsumer = await startEventConsumer(context, () => scheduler.wake());
    const emails = startEmailSender(context);
    emailSenders.set(context, emails);
    const stopEmailConsumer = await startEmailConsumer(context, () => emails.wake());
    const stopMerchantsConsumer = await startMerchantsConsumer(context);
    const stopPruning = startEventPruning(context);
    // The consumers stop first, so nothing is scheduled into a stopped sender.
    return [
      stopConsumer,
      stopEmailConsumer,
      stopMerchantsConsumer,
      () => scheduler.stop(),
      () => emails.stop(),
      stopPruning,
    ];
  },
});

export const notificationsService: ServiceDefinition = createNotificationsService();

/** The email sender of a service instance (tests wake it after moving the clock). */
export const emailSenderOf = (context: object) => emailSenders.get(context);

/** The running scheduler of a service instance (tests and the bench wait on it). */
export const schedulerOf = (context: object) => schedulers.get(context);
