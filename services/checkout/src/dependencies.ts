import { ApiError, type CallerIdentity } from '@billing/contracts';
import { InternalClient, type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import { DEFAULT_PRODUCT_CACHE_TTL_MS, ProductCache } from './sessions/product-cache';
import type { PaymentProcessor } from './payments/processor';
import { sandboxChargeLedger, sandboxRefundLedger } from './payments/ledger';
import { SandboxProcessor } from './payments/sandbox';
import { PayuniRecords } from './payments/payuni/records';
import { EcpayPeriodCharges } from './payments/ecpay/period-charges';
import { EcpayRefunds } from './payments/ecpay/refund-records';
import { PayuniCodeCharges } from './payments/payuni/code-charges';
import { EcpayInvoiceTrades } from './payments/ecpay/invoice-trades';
import { PortalChallenges } from './payments/payuni/portal-challenges';
import { type CredentialsKey, credentialsKeyOf } from '@billing/service';

export const DEFAULT_CHECKOUT_URL = 'http://127.0.0.1:8080/checkout';
export const DEFAULT_PAYMENT_LINK_URL = 'http://127.0.0.1:8080/pay';
export const DEFAULT_SWEEP_INTERVAL_MS = 30_000;
/** How long checkout waits for the catalog, promotions or billing before answering 503. */
export const DEFAULT_INTERNAL_CALL_TIMEOUT_MS = 1500;

/** What the routes and the sweep share: built once per service from `context.config`. */
export interface CheckoutDependencies {
  catalog: () => InternalClient;
  /** Products the catalog answered, until they change (docs/decisions/0015-checkout-catalog-reads.md). */
  products: ProductCache;
  promotions: () => InternalClient;
  /** Null when billing is not configured: the duplicate check then waits for the payment. */
  readonly billing: InternalClient | null;
  processor: PaymentProcessor;
  /** What processor credentials are sealed with (PROCESSOR_CREDENTIALS_KEY, else derived from INTERNAL_SECRET). */
  credentialsKey: CredentialsKey;
  /** PAYUNi's card tokens, the checkouts' SDK tokens and released keys. */
  payuni: PayuniRecords;
  /** Which period of an ECPay card plan paid which renewal. */
  ecpayPeriods: EcpayPeriodCharges;
  /** The refunds asked of ECPay, each at most once. */
  ecpayRefunds: EcpayRefunds;
  /** The ATM accounts and store codes issued at PAYUNi for invoices, by charge key. */
  payuniCodes: PayuniCodeCharges;
  /** The ECPay trades of invoices paid by transfer, each with the page the buyer opens it from. */
  ecpayInvoiceTrades: EcpayInvoiceTrades;
  /** The portal's card charges PAYUNi sent to the customer's bank (3-D Secure), and what came of them. */
  portalChallenges: PortalChallenges;
  /** Read at each use: the embedded default learns the gateway's address after checkout starts. */
  readonly checkoutUrl: string;
  /** Read at each use, like `checkoutUrl`: a payment link's `url` is `PAYMENT_LINK_URL/<url_id>`. */
  readonly paymentLinkUrl: string;
  sweepIntervalMs: number;
  close: () => void;
}

const built = new WeakMap<ServiceContext, CheckoutDependencies>();

export function dependenciesOf(context: ServiceContext): CheckoutDependencies {
  const existing = built.get(context);
  if (existing) return existing;
  const { config } = context;
  const catalog = clientFromConfig(context, 'catalog');
  const promotions = clientFromConfig(context, 'promotions');
  const billing = clientFromConfig(context, 'billing');
  const required = (client: () => InternalClient | null, name: string) => () => {
    const found = client();
    if (!found) throw new ApiError(503, 'service_unavailable', `${name} is not configured`);
    return found;
  };
  const credentialsKey = credentialsKeyOf(config, context.internalSecret);
  const deps: CheckoutDependencies = {
    catalog: required(catalog, 'catalog'),
    products: new ProductCache(positiveNumberSetting(config, 'PRODUCT_CACHE_TTL_MS', DEFAULT_PRODUCT_CACHE_TTL_MS)),
    promotions: required(promotions, 'promotions'),
    get billing() {
      return billing();
    },
    processor: new SandboxProcessor({
      allowProduction: config.SANDBOX_PROCESSOR_IN_PRODUCTION === 'demo',
      ledger: sandboxChargeLedger(context.store),
      refunds: sandboxRefundLedger(context.store),
    }),
    credentialsKey,
    payuni: new PayuniRecords(context.store, credentialsKey),
    ecpayPeriods: new EcpayPeriodCharges(context.store),
    ecpayRefunds: new EcpayRefunds(context.store),
    payuniCodes: new PayuniCodeCharges(context.store),
    ecpayInvoiceTrades: new EcpayInvoiceTrades(context.store),
    portalChallenges: new PortalChallenges(context.store),
    get checkoutUrl() {
      return config.CHECKOUT_URL ?? DEFAULT_CHECKOUT_URL;
    },
    get paymentLinkUrl() {
      return config.PAYMENT_LINK_URL ?? DEFAULT_PAYMENT_LINK_URL;
    },
    sweepIntervalMs: Number(config.CHECKOUT_SWEEP_INTERVAL_MS ?? DEFAULT_SWEEP_INTERVAL_MS),
    close: () => {
      for (const client of [catalog, promotions, billing]) client.built?.close();
    },
  };
  built.set(context, deps);
  return deps;
}

/**
 * A client of `<NAME>_SERVICE_URL`, made at first use and then kept: the embedded default
 * starts checkout before billing and only then learns billing's address.
 */
function clientFromConfig({ config, internalSecret }: ServiceContext, name: string) {
  const lazy = (): InternalClient | null => {
    if (lazy.built) return lazy.built;
    const baseUrl = config[`${name.toUpperCase()}_SERVICE_URL`];
    if (!baseUrl) return null;
    const timeoutMs = positiveNumberSetting(config, 'INTERNAL_CALL_TIMEOUT_MS', DEFAULT_INTERNAL_CALL_TIMEOUT_MS);
    lazy.built = new InternalClient({ name, baseUrl, secret: internalSecret, timeoutMs });
    return lazy.built;
  };
  lazy.built = null as InternalClient | null;
  return lazy;
}

/** Checkout calls other services with Secret-Key semantics, in the session's tenancy. */
export const serviceCaller = (organization: string, environment: CallerIdentity['environment']): CallerIdentity => ({
  organization,
  environment,
  keyKind: 'secret',
  keyId: 'checkout',
});
