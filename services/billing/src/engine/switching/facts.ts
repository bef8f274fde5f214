import { type Invoice, type ScheduledPlan, type Subscription, notFound } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { savedCardOf } from '../../charges/charge';
import { invoicesTable } from '../../invoices/read-model';
import type { ProrationBehavior, ProrationPolicy } from '../../proration/classify';
import { type PlannedSwitch, planSwitch } from '../../proration/preview';
import { billingSettingsOf } from '../../settings/aggregate';
import { priceAfterCoupon } from '../../subscriptions/discount';
import { switchingAggregate } from '../../subscriptions/aggregate';
import { blockingReasonOf } from '../../subscriptions/switch-decide';
import type { SubscriptionState } from '../../subscriptions/subscription';
import { timeOn } from '../../test-clocks/read-model';
import { subscriptionPlanOf } from '../catalog';

// What a preview and a switch are computed from (docs/plan-switching.md): the subscription's
// state on its stream, its clock, the target plan, what was paid for the period, the saved
// card and the organization's policy, read once and handed to the pure `planSwitch`.

/**
 * Payment methods a switch cannot be charged to now (docs/payments.md): a card the processor
 * charges a fixed amount on its own schedule (ECPay's card plan, `pm_ecpay_`: the renewals must
 * match it), and a transfer the customer makes for each invoice (an ATM account or store code,
 * `pm_code_`). The switch is refused until the customer pays another way.
 */
function blockedByPaymentMethod(paymentMethodId: string): 'fixed_amount_plan' | 'pays_by_transfer' | null {
  if (paymentMethodId.startsWith('pm_ecpay_')) return 'fixed_amount_plan';
  if (paymentMethodId.startsWith('pm_code_')) return 'pays_by_transfer';
  return null;
}

export type Existing = Extract<SubscriptionState, { status: 'Existing' }>;

export type SwitchRequest = { targetProductId: string; prorationBehavior?: ProrationBehavior };

/** The organization's proration policy in the environment (docs/billing-settings.md, `proration`). */
async function policyOf(context: ServiceContext, tenant: Tenant): Promise<ProrationPolicy> {
  return (await billingSettingsOf(context.store, tenant.organization, tenant.environment)).proration;
}

/** The facts of a switch of `subscriptionId` to `request`'s plan, and what `planSwitch` makes of them. */
export async function planFor(context: ServiceContext, tenant: Tenant, subscriptionId: string, request: SwitchRequest) {
  // A switch that crashed mid-way blocks this one (`switch_in_progress`) until the sweep settles it
  // (`settleHeldSwitches`): a preview, a GET, never charges.
  const state = await loadState(context, tenant, subscriptionId);
  const { subscription } = state;
  const target = await targetPlan(context, tenant, request.targetProductId, subscription);
  const now = await clockOf(context, tenant, subscription);
  const [paid, card, policy] = await Promise.all([
    paidForPeriod(context, tenant, subscription),
    savedCardOf(context, subscription.customer_id),
    policyOf(context, tenant),
  ]);
  const charge = priceAfterCoupon(subscription, target.price, now.toISOString());
  const planned: PlannedSwitch = planSwitch({
    subscription,
    target,
    paid,
    charge,
    now,
    policy,
    prorationBehavior: request.prorationBehavior,
    blockingReason: blockingReasonOf(state) ?? (card ? blockedByPaymentMethod(card.id) : null),
    hasPaymentMethod: card !== null,
  });
  return { state, target, planned, now, card };
}

/** The subscription's state on its stream, as the switching decider folds it; another tenant's is `404`. */
export async function loadState(context: ServiceContext, tenant: Tenant, subscriptionId: string): Promise<Existing> {
  const state = switchingAggregate.fold(await context.store.readStream(switchingAggregate.stream(subscriptionId)));
  if (
    state.status === 'Empty' ||
    state.organization !== tenant.organization ||
    state.environment !== tenant.environment
  ) {
    throw notFound(`No such subscription: ${subscriptionId}`);
  }
  return state;
}

/** The subscription's time: its Sandbox test clock's, or the service's. */
export function clockOf(context: ServiceContext, tenant: Tenant, subscription: Subscription): Promise<Date> {
  const { store } = context;
  return timeOn(store.database, store.tables.schema, tenant, subscription.test_clock, context.now);
}

/**
 * The target plan as the catalog has it now. 404: no active product of the organization and
 * environment (archived, the other environment's, another organization's). 400: the current
 * product, or not a subscription plan.
 */
async function targetPlan(
  context: ServiceContext,
  tenant: Tenant,
  productId: string,
  subscription: Subscription,
): Promise<ScheduledPlan> {
  const { trial_days: _trialDays, ...plan } = await subscriptionPlanOf(
    context,
    tenant,
    productId,
    'target_product_id',
    (product) =>
      product.id === subscription.product.id ? ['same_product', 'The subscription is on this product already'] : null,
  );
  return plan;
}

/**
 * What the customer paid for the current period: over the subscription's paid invoices of the
 * period (its start), the plan lines after the coupon's discount, less refunds and what earlier
 * switches credited from them, never below 0. Customer balance applied to an invoice counts as
 * paid (it was the customer's money).
 */
export async function paidForPeriod(context: ServiceContext, tenant: Tenant, subscription: Subscription) {
  const invoices = await paidInvoicesOfPeriod(
    context.store.database,
    context.store.tables.schema,
    tenant,
    subscription,
  );
  return invoices.reduce((sum, invoice) => sum + paidForPlan(invoice), 0);
}

/** The subscription's paid invoices of its current period (by its start). */
export async function paidInvoicesOfPeriod(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  subscription: Subscription,
): Promise<Invoice[]> {
  const { rows } = await sql.query<{ document: Invoice }>(
    `SELECT document FROM ${invoicesTable(schema)}
     WHERE subscription_id = $1 AND organization = $2 AND environment = $3 AND status = 'paid'
       AND (document->>'period_start')::timestamptz = $4::timestamptz`,
    [subscription.id, tenant.organization, tenant.environment, subscription.current_period_start],
  );
  return rows.map((row) => row.document);
}

export function paidForPlan(invoice: Invoice): number {
  const planLines = invoice.lines.filter((line) => line.kind === 'subscription');
  const plan = planLines.length > 0 ? planLines.reduce((sum, line) => sum + line.amount, 0) : invoice.subtotal;
  const givenBack = (invoice.amount_refunded ?? 0) + (invoice.amount_credited ?? 0);
  return Math.max(0, plan - invoice.discount_amount - givenBack);
}
