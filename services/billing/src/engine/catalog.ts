import { type Product, type ScheduledPlan, ApiError, badRequest, notFound } from '@billing/contracts';
import { InternalClient, type ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';

// Billing's client of the catalog (which owns products): the plan a switch moves to and the plan
// a subscription created directly starts on, as the catalog has them now.

const catalogClients = new WeakMap<ServiceContext, InternalClient>();

function catalogOf(context: ServiceContext): InternalClient {
  const existing = catalogClients.get(context);
  if (existing) return existing;
  const baseUrl = context.config.CATALOG_SERVICE_URL;
  if (!baseUrl) throw new ApiError(503, 'service_unavailable', 'catalog is not configured');
  const client = new InternalClient({ name: 'catalog', baseUrl, secret: context.internalSecret, timeoutMs: 5000 });
  catalogClients.set(context, client);
  return client;
}

/**
 * A subscription plan as the catalog has it now, for `field` of a request. 404: no active
 * product of the caller's organization and environment. 400 (details naming `field`): not a
 * subscription plan, or what `refuseAlso` says.
 */
export async function subscriptionPlanOf(
  context: ServiceContext,
  tenant: Tenant,
  productId: string,
  field: string,
  refuseAlso: (product: Product) => [string, string] | null = () => null,
): Promise<ScheduledPlan & { trial_days: number | null }> {
  const catalog = catalogOf(context);
  const { status, body } = await catalog.get<Product>(`/v1/products/${encodeURIComponent(productId)}`, {
    organization: tenant.organization,
    environment: tenant.environment,
    keyKind: 'secret',
    keyId: 'billing',
  });
  const refuse = (code: string, message: string) => badRequest(message, [{ path: field, code, message }]);
  // As checkout answers: an archived product, one of the other environment or of another
  // organization is no product to this caller, and the answer never says one exists elsewhere.
  if (status === 404 || (status === 200 && !body.active)) throw notFound(`No such product: ${productId}`);
  if (status !== 200) throw new ApiError(503, 'service_unavailable', `catalog answered ${status}`);
  const also = refuseAlso(body);
  if (also) throw refuse(...also);
  if (body.type !== 'SUBSCRIPTION' || !body.interval) {
    throw refuse('not_a_subscription_plan', `Product ${productId} is not a subscription plan`);
  }
  return {
    id: body.id,
    name: body.name,
    slug: body.slug,
    price: body.price,
    interval: body.interval,
    interval_count: body.interval_count,
    trial_days: body.trial_days,
    credits: body.credits,
    metered_prices: body.metered_prices,
  };
}
