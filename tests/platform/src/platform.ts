import { billingService } from '@billing/billing';
import { catalogService } from '@billing/catalog';
import { checkoutService } from '@billing/checkout';
import { notificationsService } from '@billing/notifications';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import type { Logger } from '@billing/service';
import { createGatewayService } from '../src';

export const ADMIN_TOKEN = 'adm_test_token';

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
    // These suites test what the platform does, not its read timeouts (upstream.int,
    // write-timeout.int and the checkout service's own suites do): CI runs two suites at once,
    // each with its services, Kafka and Chromium, on two cores, and a stall there outlasts the
    // 1.5 s production defaults.
    UPSTREAM_TIMEOUT_MS: '10000',
    INTERNAL_CALL_TIMEOUT_MS: '10000',
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
  const gateway = await startGateway(infrastructure, config, undefined, options.now, logger('gateway'));
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

export function startGateway(
  infrastructure: Infrastructure,
  config: Record<string, string | undefined>,
  schema?: string,
  now?: () => Date,
  logger?: Logger,
) {
  return startServiceForTest(createGatewayService(), {
    logger,
    infrastructure,
    schema,
    now,
    config: { ADMIN_TOKEN, ...config },
  });
}

export interface Keys {
  secret_key: string;
  publishable_key: string;
}
export interface CreatedOrganization {
  id: string;
  name: string;
  api_keys: { sandbox: Keys; production: Keys };
}

/** A small client for the admin API and the public API. */
export function clientOf(baseUrl: string) {
  const json = async (response: Response) => ({
    status: response.status,
    headers: response.headers,
    body: (await response.text().then((t) => (t ? JSON.parse(t) : undefined))) as any,
  });
  const admin = (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) =>
    fetch(`${baseUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(json);
  const api = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}/v1${path}`, { headers }).then(json);
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  return {
    admin,
    api,
    bearer,
    get: (path: string, key: string) => api(path, bearer(key)),
    async createOrganization(name = 'Acme'): Promise<CreatedOrganization> {
      const created = await admin('POST', '/organizations', { name });
      if (created.status !== 201) throw new Error(`organization not created: ${JSON.stringify(created.body)}`);
      return created.body;
    },
    async createProduct(organizationId: string, product: Record<string, unknown>) {
      return admin('POST', `/organizations/${organizationId}/products`, product);
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
