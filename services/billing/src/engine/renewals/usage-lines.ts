import type { InvoiceLine, MeteredPrice, Subscription } from '@billing/contracts';
import { usageStart } from '../../subscriptions/metered';

// The usage lines of a renewal invoice (docs/usage.md): each of the subscription's metered prices
// over the usage since it was last billed, in arrears.

/** The usage a renewal bills: its subscription's metered prices over [from, to). */
export type UsageWindow = { subscription: Subscription; meters: string[]; from: string; to: string };

/** The window of the renewal that ends the subscription's current period; null without metered prices. */
export function usageWindowOf(subscription: Subscription): UsageWindow | null {
  const prices = subscription.metered_prices ?? [];
  if (prices.length === 0) return null;
  return {
    subscription,
    meters: prices.map((price) => price.meter),
    from: usageStart(subscription),
    to: subscription.current_period_end,
  };
}

/**
 * The rounding rule: a period's quantity is rounded up to whole packages, each `unit_amount` TWD
 * (1,234 calls at NT$1 per 100: 13 packages, NT$13).
 */
export function usageAmount(price: MeteredPrice, quantity: number): number {
  const packages = (BigInt(quantity) + BigInt(price.package_size) - 1n) / BigInt(price.package_size);
  const amount = packages * BigInt(price.unit_amount);
  if (amount > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`usage of ${price.meter} is beyond any invoice`);
  return Number(amount);
}

/** One line per metered price with usage in the window, in the order of the prices. */
export function usageLines(window: UsageWindow, quantities: ReadonlyMap<string, number>): InvoiceLine[] {
  return (window.subscription.metered_prices ?? []).flatMap((price) => {
    const quantity = quantities.get(price.meter) ?? 0;
    if (quantity <= 0) return [];
    const per = price.package_size === 1 ? 'each' : `per ${price.package_size.toLocaleString('en-US')}`;
    return [
      {
        description: `${price.meter} × ${quantity.toLocaleString('en-US')} (NT$${price.unit_amount.toLocaleString('en-US')} ${per})`,
        amount: usageAmount(price, quantity),
        period: { start: window.from, end: window.to },
        kind: 'usage' as const,
        meter: price.meter,
        quantity,
      },
    ];
  });
}
