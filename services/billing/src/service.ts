import { BILLING_PUBLIC_EVENTS, CREDIT_EVENT_TOPICS } from '@billing/contracts';
import {
  type ServiceDefinition,
  migrateDailyMetrics,
  migrateMerchants,
  mountMetricsPart,
  startMerchantsConsumer,
  startMetricsFolding,
} from '@billing/runtime';
import { migrateCustomersReadModel } from './customers/read-model';
import { mountResolveRoute } from './customers/resolve';
import { mountCustomerBalanceRoute, mountCustomerRoutes, mountDefaultPaymentMethodRoute } from './customers/routes';
import { migrateCreditsReadModel } from './credits/read-model';
import { migrateCreditPurchases } from './credits/refund';
import { creditSpendLane, mountCreditRoutes } from './credits/routes';
import { mountEntitlementRoutes } from './entitlements/routes';
import { migrateInvoicesReadModel } from './invoices/read-model';
import { mountInvoicePaymentRoute } from './invoices/payment';
import { mountInvoiceRoutes } from './invoices/routes';
import { mountPortalConfigurationRoutes } from './portal/configurations/routes';
import { migratePortalConfigurationsReadModel } from './portal/configurations/read-model';
import { mountPortalPages } from './portal/page/routes';
import { migratePortalSessionsReadModel } from './portal/sessions/read-model';
import { mountPortalSessionRoutes } from './portal/sessions/routes';
import { startConsumers } from './provisioning/consumer';
import { customerErrorCodes } from './shared/customer-errors';
import { migrateSubscriptionsReadModel } from './subscriptions/read-model';
import { mountSubscriptionRoutes, mountSwitchingRoutes } from './subscriptions/routes';
import { startBillingSweep } from './sweep';
import { migrateBalancesReadModel } from './customers/balance';
import { migrateSwitchingReadModel } from './subscriptions/switch-read-model';
import { migrateDirectCreationReadModel } from './direct/read-model';
import { migratePendingCharges } from './charges/pending';
import { mountDirectCreationRoutes } from './direct/routes';
import { migrateTestClocksReadModel } from './test-clocks/read-model';
import { mountTestClockRoutes } from './test-clocks/routes';
import { requireAdminOrganization, requireCaller } from '@billing/service';
import { mountBillingSettingsRoutes } from './settings/routes';
import { billingMetricsHistory } from './metrics/history';
import { mountPendingChargesRoute } from './charges/routes';
import { migratePaymentsIndex } from './dashboard/payments';
import { mountDashboardReads } from './dashboard/routes';
import { migrateEinvoicesReadModel } from './einvoices/read-model';
import { mountEinvoiceRoutes, mountEinvoiceSettingsRoutes } from './einvoices/routes';
import { einvoiceNudger } from './einvoices/worker';
import { migrateMetersReadModel } from './usage/meters/read-model';
import { mountMeterRoutes } from './usage/meters/routes';
import { usageCreditSpender } from './usage/events/credit-spends';
import { mountUsageRoutes } from './usage/events/routes';
import { migrateUsageEvents } from './usage/events/store';
import { readsUsageTopic, startUsageTopicConsumer } from './usage/events/topic';

/** The billing service: customers, subscriptions, invoices, entitlements, test clocks, the customer portal. */
export const billingService: ServiceDefinition = {
  name: 'billing',
  defaultPort: 4103,
  publicEvents: BILLING_PUBLIC_EVENTS,
  eventTopics: CREDIT_EVENT_TOPICS,
  // A report of 1,000 usage events with long ids; the gateway takes bodies of up to 1 MB.
  largeBodies: { '/v1/usage_events': '1mb' },
  routes: (app, context) => {
    app.use('/v1', requireCaller);
    app.use('/internal', requireCaller);
    app.use('/admin', requireAdminOrganization);
    // Before `/v1/customers/:id`.
    mountEntitlementRoutes(app, context);
    // Before `/v1/subscriptions/:id` and `/v1/customers/:id`'s error codes.
    mountSwitchingRoutes(app, context);
    mountCustomerBalanceRoute(app, context);
    mountCreditRoutes(app, context);
    app.takeFirst(app.routeLane(creditSpendLane(context)));
    mountMeterRoutes(app, context);
    mountUsageRoutes(app, context, () => usageSpenderOf(context).nudge());
    mountDirectCreationRoutes(app, context);
    mountCustomerRoutes(app, context);
    mountSubscriptionRoutes(app, context);
    mountInvoiceRoutes(app, context);
    mountTestClockRoutes(app, context);
    mountResolveRoute(app, context);
    mountDefaultPaymentMethodRoute(app, context);
    mountInvoicePaymentRoute(app, context);
    mountPortalSessionRoutes(app, context);
    mountPortalConfigurationRoutes(app, context);
    mountPortalPages(app, context);
    mountBillingSettingsRoutes(app, context);
    mountMetricsPart(app, context);
    mountDashboardReads(app, context);
    mountPendingChargesRoute(app, context);
    mountEinvoiceRoutes(app, context);
    mountEinvoiceSettingsRoutes(app, context);
    // After the customer routes: their errors leave with the customer endpoints' own codes.
    app.use('/v1/customers', customerErrorCodes);
  },
  // Read models exist before HTTP starts and before the consumers write to them.
  start: async (context) => {
    await migrateCustomersReadModel(context.store);
    await migrateSubscriptionsReadModel(context.store);
    await migrateInvoicesReadModel(context.store);
    await migrateTestClocksReadModel(context.store);
    await migrateSwitchingReadModel(context.store);
    await migrateBalancesReadModel(context.store);
    await migrateCreditsReadModel(context.store);
    await migrateCreditPurchases(context.store);
    await migratePendingCharges(context.store);
    await migrateDirectCreationReadModel(context.store);
    await migratePortalSessionsReadModel(context.store);
    await migratePortalConfigurationsReadModel(context.store);
    await migrateMerchants(context.store);
    await migrateEinvoicesReadModel(context.store);
    await migratePaymentsIndex(context.store);
    await migrateMetersReadModel(context.store);
    await migrateUsageEvents(context.store);
    // After the read models: a first start fills the metrics from them.
    await migrateDailyMetrics(context.store, context.infrastructure.database, (tx) =>
      billingMetricsHistory(tx, context.store.tables.schema),
    );
    const einvoices = einvoiceNudger(context);
    const consumers = await startConsumers(context, einvoices.nudge);
    const usageSpender = usageSpenderOf(context);
    const usageTopic = readsUsageTopic(context.config)
      ? [await startUsageTopicConsumer(context, usageSpender.nudge)]
      : [];
    return [
      ...consumers,
      ...usageTopic,
      usageSpender.stop,
      await startMerchantsConsumer(context),
      startBillingSweep(context),
      startMetricsFolding(context),
      einvoices.drain,
    ];
  },
};

/** One usage credit spender per service context: the routes nudge the one `start` stops. */
const usageSpenders = new WeakMap<object, ReturnType<typeof usageCreditSpender>>();
function usageSpenderOf(context: Parameters<typeof usageCreditSpender>[0]) {
  let spender = usageSpenders.get(context);
  if (!spender) {
    spender = usageCreditSpender(context);
    usageSpenders.set(context, spender);
  }
  return spender;
}
