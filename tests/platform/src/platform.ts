import { billingService } from '@billing/billing';
import { catalogService } from '@billing/catalog';
import { checkoutService } from '@billing/checkout';
import { notificationsService } from '@billing/notifications';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import type { EventStore } from '@billing/eventstore';
import type { Logger } from '@billing/service';
import { ADMIN_TOKEN, startGateway } from '@billing/gateway';

export { ADMIN_TOKEN, type CreatedOrganization, type Keys, clientOf, startGateway } from '@billing/gateway';

/** The gateway, the catalog and optionally promotions as separate HTTP services on one (test) infrastructure. */
export interface Platform {
  gatewayUrl: string;
  catalog: ServiceUnderTest;
  promotions?: ServiceUnderTest;
  checkout?: ServiceUnderTest;
  billing?: ServiceUnderTest;
  notifications?: ServiceUnderTest;
  gateway: ServiceUnderTest;
  infrastructure: Infrastructure;
  stop: () => Promise<void>;
}

export interface PlatformOptions {
  config?: Record<string, string | undefined>;
  /** Also run the promotions service. */
  promotions?: boolean;
  /** Also run checkout (and promotions, which it calls). */
  checkout?: boolean;
  /** Also run billing. */
  billing?: boolean;
  /** Also run notifications. */
  notifications?: boolean;
  /** The clock of the gateway and checkout. */
  now?: () => Date;
  /** Puts something between the services and checkout (a fault-injecting proxy): answers the address to call. */
  checkoutVia?: (checkoutUrl: string) => Promise<string>;
  /** Each service's logger (silent unless LOG_LEVEL is set), e.g. to capture every log line. */
  logger?: (service: string) => Logger;
  /** The gateway's port, when a setting must name its address before it starts (OAUTH_ISSUER). */
  gatewayPort?: number;
}

export async function startPlatform(options: PlatformOptions = {}): Promise<Platform> {
  const infrastructure = await testInfrastructure('gateway-test');
  const logger = (name: string) => options.logger?.(name);
  const catalog = await startServiceForTest(catalogService, { infrastructure, logger: logger('catalog') });
  const promotions =
    options.promotions || options.checkout
      ? await startServiceForTest(promotionsService, { infrastructure, logger: logger('promotions') })
      : undefined;
  // Shared and filled in as services start: checkout learns the gateway's address last.
  const config: Record<string, string | undefined> = {
    // These suites test what the platform does, not its timeouts (upstream.int,
    // write-timeout.int and the checkout service's own suites do): CI runs four suites at once,
    // each with its services, beside PostgreSQL, Kafka and Chromium, on two cores, and a stall
    // there outlasts the 1.5 s production defaults. They wait 30 s (for a write, the longest the
    // gateway allows): in a loaded run, 20 concurrent writes of one record (write-contention.int)
    // and one coupon POST took over 10 s, and a payment link's visit got 503 (its lookup in the
    // catalog, most likely).
    UPSTREAM_TIMEOUT_MS: '30000',
    UPSTREAM_WRITE_TIMEOUT_MS: '30000',
    INTERNAL_CALL_TIMEOUT_MS: '30000',
    CATALOG_SERVICE_URL: catalog.service.url,
    PROMOTIONS_SERVICE_URL: promotions?.service.url,
    ...options.config,
  };
  const billing = options.billing
    ? await startServiceForTest(billingService, { infrastructure, config, now: options.now, logger: logger('billing') })
    : undefined;
  config.BILLING_SERVICE_URL = billing?.service.url;
  const checkout = options.checkout
    ? await startServiceForTest(checkoutService, {
        infrastructure,
        config,
        now: options.now,
        logger: logger('checkout'),
      })
    : undefined;
  config.CHECKOUT_SERVICE_URL =
    checkout && options.checkoutVia ? await options.checkoutVia(checkout.service.url) : checkout?.service.url;
  const notifications = options.notifications
    ? await startServiceForTest(notificationsService, {
        infrastructure,
        config,
        now: options.now,
        logger: logger('notifications'),
      })
    : undefined;
  config.NOTIFICATIONS_SERVICE_URL = notifications?.service.url;
  const gateway = await startGateway(
    infrastructure,
    config,
    undefined,
    options.now,
    logger('gateway'),
    options.gatewayPort,
  );
  config.CHECKOUT_URL ??= `${gateway.service.url}/checkout`;
  config.PAYMENT_LINK_URL ??= `${gateway.service.url}/pay`;
  config.PORTAL_URL ??= `${gateway.service.url}/portal`;
  return {
    gatewayUrl: gateway.service.url,
    catalog,
    promotions,
    checkout,
    billing,
    notifications,
    gateway,
    infrastructure,
    stop: async () => {
      await gateway.stop();
      await notifications?.stop();
      await checkout?.stop();
      await billing?.stop();
      await promotions?.stop();
      await catalog.stop();
      await infrastructure.close();
    },
  };
}

export const plan = (overrides: Record<string, unknown> = {}) => ({
  environment: 'SANDBOX',
  name: 'Pro',
  type: 'SUBSCRIPTION',
  interval: 'month',
  interval_count: 1,
  price: 299,
  currency: 'TWD',
  ...overrides,
});

/**
 * JSON calls to the public API at `/v1` with an API key (the one `defaultKey` gives when none is
 * passed): `{ status, body }`, the body parsed.
 */
export function jsonApi(gatewayUrl: () => string, defaultKey: () => string) {
  return async (method: string, path: string, body?: unknown, key = defaultKey()) => {
    const response = await fetch(`${gatewayUrl()}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined } as { status: number; body: any };
  };
}

/**
 * How many events a service's store holds that were appended on behalf of a request (their
 * metadata names its actor). Consumers' events have none: a test asserting that a refused
 * request appended nothing counts these, not what a consumer appends meanwhile.
 */
export async function eventsAppendedByRequests(store: EventStore): Promise<number> {
  const { rows } = await store.database.query<{ n: string }>(
    `SELECT count(*)::text AS n FROM ${store.tables.events} WHERE metadata IS NOT NULL`,
  );
  return Number(rows[0]!.n);
}
