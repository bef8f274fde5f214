import type { InvoiceLine, MeteredPrice, Subscription } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { usageStart } from '../../subscriptions/metered';
import { metersByKey } from '../../usage/meters/read-model';
import { quantityOf, totalsByMeter, usageEventsTable } from '../../usage/events/store';

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

/**
 * The usage lines of the invoice that ends the subscription's current period, in its opening's
 * transaction: the customer's events of the priced meters before the period's end, not billed
 * before and not paid by credits, are claimed for the invoice (a rollback gives them back) and
 * aggregated by their meters. Late events, those of a period billed already, go on this invoice.
 */
export async function claimUsageLines(
  tx: SqlExecutor,
  schema: string,
  tenant: Tenant,
  subscription: Subscription,
  invoiceId: string,
): Promise<InvoiceLine[]> {
  const window = usageWindowOf(subscription);
  if (!window) return [];
  const { rows } = await tx.query<{ meter: string; events: string; sum: string; max: string }>(
    `WITH claimed AS (
       UPDATE ${usageEventsTable(schema)} SET invoice_id = $1
       WHERE customer_id = $2 AND organization = $3 AND environment = $4 AND meter = ANY($5::text[])
         AND occurred_at >= $6 AND occurred_at < $7 AND invoice_id IS NULL
         AND (credits_state IS NULL OR credits_state = 'unpaid')
       RETURNING meter, quantity)
     SELECT meter, count(*) AS events, sum(quantity) AS sum, max(quantity) AS max FROM claimed GROUP BY meter`,
    [
      invoiceId,
      subscription.customer_id,
      tenant.organization,
      tenant.environment,
      window.meters,
      subscription.created_at,
      window.to,
    ],
  );
  const totals = totalsByMeter(rows);
  const meters = await metersByKey(tx, schema, tenant, window.meters);
  const quantities = new Map(
    [...totals].map(([meter, total]) => {
      const aggregation = meters.get(meter)?.aggregation ?? 'sum';
      return [meter, quantityOf(total, aggregation)];
    }),
  );
  return usageLines(window, quantities);
}
