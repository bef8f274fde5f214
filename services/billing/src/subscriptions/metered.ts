import type { MeteredPrice, Subscription } from '@billing/contracts';

// A plan's metered prices on its subscriptions, and where the usage a renewal invoice bills
// starts (docs/usage.md).

/**
 * The subscription's metered prices from its plan's: none on a plan without them, and no field
 * at all on a subscription that never had any (documents from before metered prices stay as they were).
 */
export function meteredPricesField(
  prices: MeteredPrice[] | null | undefined,
  held?: Subscription['metered_prices'],
): Pick<Subscription, 'metered_prices'> {
  const priced = prices && prices.length > 0 ? prices : null;
  return priced || held ? { metered_prices: priced } : {};
}

/** Where the usage the subscription's next renewal invoice bills starts. */
export function usageStart(subscription: Subscription): string {
  return subscription.usage_since ?? subscription.current_period_start;
}

/**
 * A switch that starts a new period leaves the usage of the period it ended to the next renewal
 * invoice: the usage it bills starts where it would have without the switch.
 */
export function usageSinceAcrossNewPeriod(subscription: Subscription): Pick<Subscription, 'usage_since'> {
  return subscription.metered_prices?.length || subscription.usage_since
    ? { usage_since: usageStart(subscription) }
    : {};
}

/** Whether the subscription's plan has metered prices, so that its usage is billed. */
export const billsUsage = (subscription: Subscription): boolean => (subscription.metered_prices?.length ?? 0) > 0;
