import {
  OpenApiRegistry,
  asyncApiDocument,
  registerBillingRoutes,
  registerCheckoutRoutes,
  registerCreditRoutes,
  registerEmbeddedCheckoutRoutes,
  registerPaymentLinkRoutes,
  registerPortalRoutes,
  registerAdminRoutes,
  registerAnalyticsRoutes,
  registerProductRoutes,
  registerPromotionRoutes,
  registerOrderRoutes,
  registerRefundRoutes,
  registerSubscriptionCreationRoutes,
  registerSwitchingRoutes,
  registerTestClockRoutes,
  registerUsageRoutes,
  registerWebhookRoutes,
} from '@billing/contracts';

let cached: ReturnType<OpenApiRegistry['toOpenApi']> | undefined;

/** The public API as implemented so far, from the zod schemas in libs/contracts. */
export function publicApiDocument() {
  if (!cached) {
    const registry = new OpenApiRegistry();
    registerProductRoutes(registry);
    registerPromotionRoutes(registry);
    registerCheckoutRoutes(registry);
    registerEmbeddedCheckoutRoutes(registry);
    registerPaymentLinkRoutes(registry);
    registerRefundRoutes(registry);
    registerOrderRoutes(registry);
    registerAnalyticsRoutes(registry);
    registerBillingRoutes(registry);
    registerSwitchingRoutes(registry);
    registerCreditRoutes(registry);
    registerUsageRoutes(registry);
    registerSubscriptionCreationRoutes(registry);
    registerTestClockRoutes(registry);
    registerPortalRoutes(registry);
    registerWebhookRoutes(registry);
    cached = registry.toOpenApi({ title: 'Billing API', version: '1.0.0', serverUrl: '/v1' });
  }
  return cached;
}

let cachedAdmin: ReturnType<OpenApiRegistry['toOpenApi']> | undefined;

/** The admin API (`/admin/v1`), from the zod schemas in libs/contracts (`registerAdminRoutes`). */
export function adminApiDocument() {
  cachedAdmin ??= registerAdminRoutes(new OpenApiRegistry()).toOpenApi({
    title: 'Billing admin API',
    version: '1.0.0',
    serverUrl: '/admin/v1',
  });
  return cachedAdmin;
}

let cachedEvents: ReturnType<typeof asyncApiDocument> | undefined;

/** The Kafka topics and their event schemas (AsyncAPI 3), the same document as docs/asyncapi.json. */
export function eventsApiDocument() {
  cachedEvents ??= asyncApiDocument();
  return cachedEvents;
}
