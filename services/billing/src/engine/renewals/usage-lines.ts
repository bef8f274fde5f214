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
 * The customer's events of the window's meters from the subscription's start to the window's end,
 * not billed before and not paid by credits: the condition of a renewal's claim and of the
 * portal's look at the usage so far. Its parameters are `unbilledUsageParams`' from `$first` on.
 */
const unbilledUsage = (first: number) => {
  const [customer, organization, environment, meters, from, to] = [0, 1, 2, 3, 4, 5].map((i) => `$${first + i}`);
  return `customer_id = ${customer} AND organization = ${organization} AND environment = ${environment}
    AND meter = ANY(${meters}::text[]) AND occurred_at >= ${from} AND occurred_at < ${to} AND invoice_id IS NULL
    AND (credits_state IS NULL OR credits_state = 'unpaid')`;
};

const unbilledUsageParams = (tenant: Tenant, window: UsageWindow) => [
  window.subscription.customer_id,
  tenant.organization,
  tenant.environment,
  window.meters,
  window.subscription.created_at,
  window.to,
];

type TotalsRow = { meter: string; events: string; sum: string; max: string };

/** Each meter's quantity by its aggregation (a meter no longer found sums). */
async function quantitiesOf(sql: SqlExecutor, schema: string, tenant: Tenant, window: UsageWindow, rows: TotalsRow[]) {
  const meters = await metersByKey(sql, schema, tenant, window.meters);
  const quantities = new Map(
    [...totalsByMeter(rows)].map(([meter, total]) => {
      const aggregation = meters.get(meter)?.aggregation ?? 'sum';
      return [meter, quantityOf(total, aggregation)];
    }),
  );
  return { quantities, meters };
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
  const { rows } = await tx.query<TotalsRow>(
    `WITH claimed AS (
       UPDATE ${usageEventsTable(schema)} SET invoice_id = $1 WHERE ${unbilledUsage(2)}
       RETURNING meter, quantity)
     SELECT meter, count(*) AS events, sum(quantity) AS sum, max(quantity) AS max FROM claimed GROUP BY meter`,
    [invoiceId, ...unbilledUsageParams(tenant, window)],
  );
  return usageLines(window, (await quantitiesOf(tx, schema, tenant, window, rows)).quantities);
}

/** A metered price's usage so far, as the invoice that ends the period would bill it now. */
export type UsageSoFar = { meter: string; name: string; quantity: number; amount: number };

/**
 * What the subscription's next invoice would bill for usage if its period ended now, read without
 * claiming anything (the customer portal shows it): the same events and rounding rule as the claim.
 */
export async function usageSoFar(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  subscription: Subscription,
): Promise<UsageSoFar[]> {
  const window = usageWindowOf(subscription);
  if (!window) return [];
  const { rows } = await sql.query<TotalsRow>(
    `SELECT meter, count(*) AS events, sum(quantity) AS sum, max(quantity) AS max FROM ${usageEventsTable(schema)}
     WHERE ${unbilledUsage(1)} GROUP BY meter`,
    unbilledUsageParams(tenant, window),
  );
  const { quantities, meters } = await quantitiesOf(sql, schema, tenant, window, rows);
  return usageLines(window, quantities).map((line) => ({
    meter: line.meter!,
    name: meters.get(line.meter!)?.name ?? line.meter!,
    quantity: line.quantity!,
    amount: line.amount,
  }));
}
