import { CHECKOUT_PUBLIC_EVENTS } from '@billing/contracts';
import {
  type ServiceDefinition,
  migrateDailyMetrics,
  migrateMerchants,
  mountMetricsPart,
  startMerchantsConsumer,
  startMetricsFolding,
} from '@billing/runtime';
import { dependenciesOf } from './dependencies';
import { mountCardFormRoutes } from './embedded/card-form-routes';
import { mountEmbedPage } from './embedded/embed-page';
import { mountEmbeddedCheckoutRoutes } from './embedded/routes';
import { mountSdkCouponRoutes } from './embedded/sdk-coupon-routes';
import { mountHostedPage } from './hosted-page/routes';
import { mountInvoicePaymentPages } from './hosted-page/invoice-payment-pages';
import { migratePaymentLinksReadModel } from './payment-links/read-model';
import { mountPaymentLinkRoutes } from './payment-links/routes';
import { migrateSandboxChargeLedger } from './payments/ledger';
import { migratePayuniRecords } from './payments/payuni/records';
import { migrateRefundDeferrals } from './payments/refund-deferrals';
import { migratePayuniVerifications } from './payments/payuni-verifications';
import { migrateEcpayPeriodCharges } from './payments/ecpay/period-charges';
import { migrateEcpayRefunds } from './payments/ecpay/refund-records';
import { migratePayuniCodeCharges } from './payments/payuni/code-charges';
import { migrateEcpayInvoiceTrades } from './payments/ecpay/invoice-trades';
import { migratePortalChallenges } from './payments/payuni/portal-challenges';
import { migrateRenewalCharges } from './payments/renewal-charges';
import { mountChargeRoutes } from './payments/routes';
import { mountProcessorSettingsRoutes } from './payments/settings/routes';
import { migrateUnmatchedPayments, mountUnmatchedPaymentsRoute } from './payments/unmatched';
import { migrateRefundsReadModel } from './refunds/read-model';
import { mountRefundRoutes } from './refunds/routes';
import { checkoutMetricsHistory } from './metrics/history';
import { startRefundSweep } from './refunds/sweep';
import { startBillingConsumer } from './sessions/billing-consumer';
import { startProductCacheInvalidation } from './sessions/product-cache';
import { startExpirySweep } from './sessions/expiry';
import { migrateProcessorReconciliations, startProcessorReconciliation } from './sessions/reconcile';
import { mountPayRoute } from './sessions/pay';
import { migrateSessionsReadModel } from './sessions/read-model';
import { migrateEinvoiceOrganizations } from './sessions/einvoice-enabled';
import { migrateOrderEinvoices } from './sessions/order-einvoices';
import { mountOrderReads } from './orders/admin-routes';
import { mountOrderRoutes } from './orders/routes';
import { mountRefundReads } from './refunds/admin-reads';
import { mountSessionRoutes } from './sessions/routes';

/** The checkout service: checkout sessions, orders, payment and setup intents, refunds, sandbox payment processor. */
export const checkoutService: ServiceDefinition = {
  name: 'checkout',
  defaultPort: 4102,
  publicEvents: CHECKOUT_PUBLIC_EVENTS,
  routes: (app, context) => {
    mountSessionRoutes(app, context);
    mountPayRoute(app, context);
    mountEmbeddedCheckoutRoutes(app, context);
    mountSdkCouponRoutes(app, context);
    mountCardFormRoutes(app, context);
    mountEmbedPage(app, context);
    mountInvoicePaymentPages(app, context);
    mountHostedPage(app, context);
    mountPaymentLinkRoutes(app, context);
    mountChargeRoutes(app, context);
    mountRefundRoutes(app, context);
    mountProcessorSettingsRoutes(app, context, dependenciesOf(context).credentialsKey);
    mountUnmatchedPaymentsRoute(app, context);
    mountOrderReads(app, context);
    mountOrderRoutes(app, context);
    mountRefundReads(app, context);
    mountMetricsPart(app, context);
  },
  // Read models are created before HTTP starts, so the first request finds its table.
  start: async (context) => {
    await migrateSessionsReadModel(context.store);
    await migrateEinvoiceOrganizations(context.store);
    await migrateOrderEinvoices(context.store);
    await migratePaymentLinksReadModel(context.store);
    await migrateSandboxChargeLedger(context.store);
    await migratePayuniRecords(context.store);
    await migrateEcpayPeriodCharges(context.store);
    await migrateEcpayRefunds(context.store);
    await migrateRefundDeferrals(context.store);
    await migratePayuniVerifications(context.store);
    await migratePayuniCodeCharges(context.store);
    await migrateEcpayInvoiceTrades(context.store);
    await migratePortalChallenges(context.store);
    await migrateRenewalCharges(context.store);
    await migrateProcessorReconciliations(context.store);
    await migrateRefundsReadModel(context.store);
    await migrateUnmatchedPayments(context.store);
    await migrateMerchants(context.store);
    // After the read models: a first start fills the metrics from them.
    await migrateDailyMetrics(context.store, context.infrastructure.database, (tx) =>
      checkoutMetricsHistory(tx, context.store.tables.schema),
    );
    const stopSweep = startExpirySweep(context);
    const stopRefundSweep = startRefundSweep(context);
    const stopReconciliation = startProcessorReconciliation(context);
    const stopBillingConsumer = await startBillingConsumer(context);
    const stopMerchantsConsumer = await startMerchantsConsumer(context);
    const stopProductCacheInvalidation = await startProductCacheInvalidation(context, dependenciesOf(context).products);
    return [
      startMetricsFolding(context),
      stopBillingConsumer,
      stopMerchantsConsumer,
      stopProductCacheInvalidation,
      async () => {
        await stopSweep();
        await stopRefundSweep();
        await stopReconciliation();
        dependenciesOf(context).close();
      },
    ];
  },
};
