import { InternalClient, type ServiceContext } from '@billing/runtime';

const built = new WeakMap<ServiceContext, { checkout: InternalClient | null }>();

/**
 * Billing's client of checkout (which owns the payment processor), made at first use: the
 * embedded default learns checkout's address only after billing has started. Null when
 * `CHECKOUT_SERVICE_URL` is not set; renewals then cannot charge and wait.
 */
export function checkoutClient(context: ServiceContext): InternalClient | null {
  const existing = built.get(context);
  if (existing?.checkout) return existing.checkout;
  const baseUrl = context.config.CHECKOUT_SERVICE_URL;
  if (!baseUrl) return null;
  const checkout = new InternalClient({ name: 'checkout', baseUrl, secret: context.internalSecret, timeoutMs: 5000 });
  built.set(context, { checkout });
  return checkout;
}
