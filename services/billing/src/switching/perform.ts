import {
  type Environment,
  type Invoice,
  type InvoiceLine,
  type Product,
  type ScheduledPlan,
  type Subscription,
  type SubscriptionSchedule,
  type SubscriptionSwitch,
  type SwitchPreview,
  ApiError,
  badRequest,
  conflict,
  newId,
  notFound,
} from '@billing/contracts';
import {
  type EventStoreTransaction,
  handleCommand,
  handleCommandInTransaction,
  isRetryableWriteError,
  type SqlExecutor,
} from '@billing/eventstore';
import { InternalClient, type ServiceContext, positiveNumberSetting } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { periodEnd } from '../calendar/period';
import { type ChargeOutcome, chargeSavedCard, chargeStatus, paymentPending, savedCardOf } from '../charges/charge';
import { apportionCredit } from '../invoices/credit';
import { invoiceChargeKey } from '../invoices/payment';
import { invoiceAggregate, invoiceStream } from '../invoices/invoice';
import { findInvoice, invoicesTable, nextInvoiceNumber, projectInvoices } from '../invoices/read-model';
import { renewalInvoiceId } from '../invoices/ids';
import { priceAfterCoupon } from '../subscriptions/discount';
import { currentSubscription } from '../subscriptions/queries';
import { projectSubscriptions, subscriptionsTable } from '../subscriptions/read-model';
import { type SubscriptionState, subscriptionStream } from '../subscriptions/subscription';
import { timeOn } from '../test-clocks/read-model';
import { changeBalance } from '../customers/balance';
import { billingSettingsOf } from '../settings/settings';
import type { ProrationBehavior, ProrationPolicy } from '../proration/classify';
import { type SwitchingCommand, blockingReasonOf, switchingAggregate } from '../subscriptions/switch-decide';
import { type PlannedSwitch, planSwitch } from '../proration/preview';
import { findSchedule, switchesTable } from '../subscriptions/switch-read-model';

// Plan switching as billing does it (docs/plan-switching.md). The exported functions are the
// in-process API the routes and the customer portal call.

type Existing = Extract<SubscriptionState, { status: 'Existing' }>;

export type SwitchRequest = { targetProductId: string; prorationBehavior?: ProrationBehavior };

/** The organization's proration policy in the environment (docs/billing-settings.md, `proration`). */
async function policyOf(context: ServiceContext, tenant: Tenant): Promise<ProrationPolicy> {
  return (await billingSettingsOf(context.store, tenant.organization, tenant.environment)).proration;
}

/** `GET /v1/subscriptions/{id}/switch-preview`: computes the preview, changes nothing. */
export async function previewSwitch(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
  targetProductId: string,
  options: { prorationBehavior?: ProrationBehavior } = {},
): Promise<SwitchPreview> {
  const tenant = { organization, environment };
  const { planned } = await planFor(context, tenant, subscriptionId, { targetProductId, ...options });
  return planned.preview;
}

/**
 * `POST /v1/subscriptions/{id}/switch`: performs what the preview says. Immediate and charging:
 * holds the subscription (`StartSwitch`, at its stream version: a second switch meanwhile is
 * 409), charges the saved card once (key `<invoice>:1`), then records the paid proration
 * invoice and the new plan in one transaction; a decline releases the hold and answers 402,
 * the subscription unchanged. Scheduled: the one pending schedule. The others change the plan now.
 */
export async function performSwitch(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
  request: SwitchRequest,
): Promise<SubscriptionSwitch> {
  const tenant: Tenant = { organization, environment };
  const { state, target, planned, now, card } = await planFor(context, tenant, subscriptionId, request);
  const { preview, treatment } = planned;
  refuseUnlessProceeding(state, preview);
  const who = { subscriptionId, ...tenant, now };
  const periodStart = state.subscription.current_period_start;
  const answer = async (
    invoice: Invoice | null,
    schedule: SubscriptionSchedule | null,
  ): Promise<SubscriptionSwitch> => ({
    object: 'subscription_switch',
    switch_type: preview.switch_type,
    execution_mode: preview.execution_mode,
    subscription: await currentSubscription(context, tenant, subscriptionId),
    invoice,
    schedule,
    proration: preview.proration,
  });

  if (treatment === 'schedule') {
    const { state: after } = await onSubscription(context, tenant, {
      type: 'ScheduleSwitch',
      data: { ...who, scheduleId: newId('subscriptionSchedule'), target, switchType: planned.type, periodStart },
    });
    const schedule = after.status === 'Existing' ? (after.schedule ?? null) : null;
    return answer(null, schedule);
  }

  if (treatment === 'swap' || treatment === 'defer') {
    const switchId = newId('subscriptionSchedule').replace('sub_sched_', 'sw_');
    await inTransaction(context, async (tx) => {
      await lockForSwitch(tx, context, state.subscription);
      await run(tx, context, tenant, {
        type: 'SwitchPlanNow',
        data: { ...who, switchId: null, target, newPeriod: false, periodStart },
      });
      await recordBalance(tx, context, tenant, state.subscription, planned, switchId, null, now);
      const credit = preview.proration?.credit_amount ?? 0;
      await recordSwitchCredit(tx, context, tenant, state.subscription, credit, switchId, now);
    });
    return answer(null, null);
  }

  // prorate: a new period of the new plan starts now.
  const invoiceId = newId('invoice');
  const switchId = `sw_${invoiceId.slice(3)}`;
  const proration = preview.proration!;
  const period = {
    start: now.toISOString(),
    end: periodEnd(now, target.interval, target.interval_count).toISOString(),
  };
  const recording: SwitchRecording = {
    lines: prorationLines(state.subscription, target, planned, period),
    amount_discount: target.price - proration.charge_amount,
    balance_change: planned.balanceChange,
  };
  const record = (tx: EventStoreTransaction, held: boolean) =>
    recordProratedSwitch(tx, context, tenant, {
      subscription: state.subscription,
      switchId,
      held,
      invoiceId,
      target,
      amount: planned.chargeNow,
      recording,
      now,
    });

  if (planned.chargeNow === 0) {
    await inTransaction(context, async (tx) => {
      await lockForSwitch(tx, context, state.subscription);
      await record(tx, false);
    });
    return answer(
      (await findInvoice(context.store.database, context.store.tables.schema, tenant, invoiceId)) ?? null,
      null,
    );
  }

  // Hold the subscription, then charge, then record. A crash after the hold is settled later
  // (`settleHeldSwitch`), asking the charge again with the same key, so it is charged once.
  await inTransaction(context, async (tx) => {
    await lockForSwitch(tx, context, state.subscription);
    await run(tx, context, tenant, {
      type: 'StartSwitch',
      // Real time, not the subscription's clock (a test clock may stand still): the hold's age.
      data: {
        ...who,
        switchId,
        invoiceId,
        target,
        amount: planned.chargeNow,
        periodStart,
        recording,
        heldAt: new Date(),
      },
    });
  });
  let outcome: ChargeOutcome;
  try {
    outcome = await chargeSavedCard(context, tenant, {
      card: card!,
      amount: planned.chargeNow,
      key: switchChargeKey(invoiceId),
      pending: null,
    });
  } catch (error) {
    // Refused before anything was charged (checkout answered 4xx, or is not configured).
    await onSubscription(context, tenant, {
      type: 'FailSwitch',
      data: { ...who, switchId, failure: { code: 'processor_unavailable', message: 'The charge could not be made' } },
    });
    throw error;
  }
  if (outcome.status === 'unknown') {
    // Never read as "not charged": the hold stays until the sweep learns the outcome (settleHeldSwitch).
    throw paymentPending(
      `The charge for switching ${subscriptionId} got no answer from the processor; it is being confirmed, and nothing more will be charged`,
      [{ switch_id: switchId, invoice_id: invoiceId }],
    );
  }
  if (outcome.status === 'declined') {
    await onSubscription(context, tenant, {
      type: 'FailSwitch',
      data: { ...who, switchId, failure: { code: outcome.code, message: outcome.message } },
    });
    throw new ApiError(402, 'payment_required', `The card was declined: ${outcome.message}`, [
      { code: outcome.code, message: outcome.message },
    ]);
  }
  await inTransaction(context, (tx) => record(tx, true));
  return answer(
    (await findInvoice(context.store.database, context.store.tables.schema, tenant, invoiceId)) ?? null,
    null,
  );
}

/** What recording a held switch needs, kept with the hold so that a later settlement can record it. */
type SwitchRecording = { lines: InvoiceLine[]; amount_discount: number; balance_change: number };

/** The new plan from `now` and the paid proration invoice (and any balance), in the caller's transaction. */
async function recordProratedSwitch(
  tx: EventStoreTransaction,
  context: ServiceContext,
  tenant: Tenant,
  input: {
    subscription: Subscription;
    switchId: string;
    held: boolean;
    invoiceId: string;
    target: ScheduledPlan;
    amount: number;
    recording: SwitchRecording;
    now: Date;
  },
): Promise<void> {
  const { subscription, switchId, invoiceId, now } = input;
  const credit = creditOfLines(input.recording.lines);
  await recordSwitchCredit(tx, context, tenant, subscription, credit, switchId, now);
  const { state: switched } = await run(tx, context, tenant, {
    type: 'SwitchPlanNow',
    data: {
      subscriptionId: subscription.id,
      ...tenant,
      now,
      switchId: input.held ? switchId : null,
      target: input.target,
      newPeriod: true,
      periodStart: subscription.current_period_start,
    },
  });
  if (switched.status !== 'Existing') throw new Error(`subscription ${subscription.id} vanished`);
  const period = { start: switched.subscription.current_period_start, end: switched.subscription.current_period_end };
  await handleCommandInTransaction(
    tx,
    context.store,
    invoiceStream(invoiceId),
    invoiceAggregate,
    {
      type: 'RecordPaidInvoice',
      data: {
        invoiceId,
        number: await nextInvoiceNumber(tx, context.store.tables.schema, tenant),
        ...tenant,
        customerId: subscription.customer_id,
        subscriptionId: subscription.id,
        orderId: null,
        checkoutSessionId: null,
        lines: input.recording.lines,
        amountDiscount: input.recording.amount_discount,
        amountTotal: input.amount,
        periodStart: period.start,
        periodEnd: period.end,
        paidAt: now.toISOString(),
        now,
      },
    },
    {
      ...tenant,
      occurredAt: now,
      project: (inner, events) => projectInvoices(inner, context.store.tables.schema, events),
    },
  );
  const change = input.recording.balance_change;
  if (change !== 0) {
    await changeBalance(tx, context.store, {
      type: 'ChangeBalance',
      data: {
        customer_id: subscription.customer_id,
        ...tenant,
        amount: change,
        reason: change > 0 ? 'switch_credit' : 'switch_deferred_charge',
        subscription_id: subscription.id,
        invoice_id: invoiceId,
        key: `switch:${switchId}`,
        now,
      },
    });
  }
}

/** How long a switch may hold its subscription before it counts as abandoned (a crash): `BILLING_SWITCH_HOLD_MS`, 60 s. */
const holdMsOf = (context: ServiceContext) => positiveNumberSetting(context.config, 'BILLING_SWITCH_HOLD_MS', 60_000);

/**
 * Settles a switch that has held the subscription longer than `BILLING_SWITCH_HOLD_MS` (its
 * process crashed between the hold and the recording): asks the charge again with the same key
 * (the processor answers the first charge if there was one, so nothing is charged twice), then
 * records the switch as it was meant, or releases the hold on a decline. A switch still under way
 * is left alone. Returns whether it settled one.
 */
export async function settleHeldSwitch(
  context: ServiceContext,
  tenant: Tenant,
  subscriptionId: string,
): Promise<boolean> {
  const state = await loadState(context, tenant, subscriptionId);
  const held = state.switching;
  if (!held || Date.now() - Date.parse(held.held_at ?? held.started_at) < holdMsOf(context)) return false;
  const now = new Date(held.started_at);
  const who = { subscriptionId, ...tenant, now };
  const recording = held.recording;
  if (!recording) {
    // A hold from before holds kept their recording: nothing to record it from; released.
    await onSubscription(context, tenant, {
      type: 'FailSwitch',
      data: { ...who, switchId: held.switch_id, failure: { code: 'abandoned', message: 'The switch was interrupted' } },
    });
    return true;
  }
  // Asked, not charged again: a key never answered is given up at the processor, so this is final.
  const outcome = await chargeStatus(context, tenant, switchChargeKey(held.invoice_id), { release: true });
  if (outcome.status === 'unknown') return false;
  if (outcome.status === 'declined') {
    await onSubscription(context, tenant, {
      type: 'FailSwitch',
      data: { ...who, switchId: held.switch_id, failure: { code: outcome.code, message: outcome.message } },
    });
    return true;
  }
  await inTransaction(context, (tx) =>
    recordProratedSwitch(tx, context, tenant, {
      subscription: state.subscription,
      switchId: held.switch_id,
      held: true,
      invoiceId: held.invoice_id,
      target: held.target_plan,
      amount: held.amount,
      recording,
      now,
    }),
  );
  return true;
}

/** The sweep's part: settles every hold older than `BILLING_SWITCH_HOLD_MS` (see `settleHeldSwitch`). */
export async function settleHeldSwitches(context: ServiceContext): Promise<number> {
  const { database, tables } = context.store;
  const { rows } = await database.query<{ subscription_id: string; organization: string; environment: Environment }>(
    `SELECT s.subscription_id, sub.organization, sub.environment
       FROM ${switchesTable(tables.schema)} s JOIN ${subscriptionsTable(tables.schema)} sub ON sub.id = s.subscription_id`,
  );
  let settled = 0;
  for (const { subscription_id, organization, environment } of rows) {
    if (await settleHeldSwitch(context, { organization, environment }, subscription_id)) settled++;
  }
  return settled;
}

/** `DELETE /v1/subscriptions/{id}/schedule`: cancels the pending schedule; 404 when none is pending. */
export async function cancelSchedule(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
): Promise<SubscriptionSchedule> {
  const tenant = { organization, environment };
  const state = await loadState(context, tenant, subscriptionId);
  const now = await clockOf(context, tenant, state.subscription);
  const { events } = await onSubscription(context, tenant, {
    type: 'CancelSchedule',
    data: { subscriptionId, ...tenant, now },
  });
  const canceled = events.find((e) => e.type === 'SubscriptionScheduleCanceled');
  return (canceled!.data as { object: SubscriptionSchedule }).object;
}

/** `GET /v1/subscriptions/{id}/schedule`: the pending schedule, else the latest; 404 when none ever. */
export async function getSchedule(
  context: ServiceContext,
  organization: string,
  environment: Environment,
  subscriptionId: string,
): Promise<SubscriptionSchedule> {
  const tenant = { organization, environment };
  await loadState(context, tenant, subscriptionId);
  const schedule = await findSchedule(context.store.database, context.store.tables.schema, tenant, subscriptionId);
  if (!schedule) throw notFound(`Subscription ${subscriptionId} has no schedule`);
  return schedule;
}

// ---------------------------------------------------------------- reading the facts

async function planFor(context: ServiceContext, tenant: Tenant, subscriptionId: string, request: SwitchRequest) {
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
    blockingReason: blockingReasonOf(state),
    hasPaymentMethod: card !== null,
  });
  return { state, target, planned, now, card };
}

async function loadState(context: ServiceContext, tenant: Tenant, subscriptionId: string): Promise<Existing> {
  const history = await context.store.readStream(subscriptionStream(subscriptionId));
  const state = history.reduce(switchingAggregate.evolve, switchingAggregate.initialState());
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
function clockOf(context: ServiceContext, tenant: Tenant, subscription: Subscription): Promise<Date> {
  const { store } = context;
  return timeOn(store.database, store.tables.schema, tenant, subscription.test_clock, context.now);
}

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
 * The target plan as the catalog has it now. 404: no such product in the organization (in
 * either environment). 400: the current product, not a subscription plan, archived, or a
 * product of the other environment.
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
 * A subscription plan as the catalog has it now, for `field` of a request. 404: no such
 * product in the organization (in either environment). 400 (details naming `field`): a
 * product of the other environment, not a subscription plan, archived, or what `refuse` says.
 */
export async function subscriptionPlanOf(
  context: ServiceContext,
  tenant: Tenant,
  productId: string,
  field: string,
  refuseAlso: (product: Product) => [string, string] | null = () => null,
): Promise<ScheduledPlan & { trial_days: number | null }> {
  const catalog = catalogOf(context);
  const read = (environment: Environment) =>
    catalog.get<Product>(`/v1/products/${encodeURIComponent(productId)}`, {
      organization: tenant.organization,
      environment,
      keyKind: 'secret',
      keyId: 'billing',
    });
  const refuse = (code: string, message: string) => badRequest(message, [{ path: field, code, message }]);
  const { status, body } = await read(tenant.environment);
  if (status === 404) {
    const other = tenant.environment === 'SANDBOX' ? 'PRODUCTION' : 'SANDBOX';
    if ((await read(other)).status === 200) {
      throw refuse('other_environment', `Product ${productId} is a ${other} product, not ${tenant.environment}`);
    }
    throw notFound(`No such product: ${productId}`);
  }
  if (status !== 200) throw new ApiError(503, 'service_unavailable', `catalog answered ${status}`);
  const also = refuseAlso(body);
  if (also) throw refuse(...also);
  if (body.type !== 'SUBSCRIPTION' || !body.interval) {
    throw refuse('not_a_subscription_plan', `Product ${productId} is not a subscription plan`);
  }
  if (!body.active) throw refuse('product_archived', `Product ${productId} is archived`);
  return {
    id: body.id,
    name: body.name,
    slug: body.slug,
    price: body.price,
    interval: body.interval,
    interval_count: body.interval_count,
    trial_days: body.trial_days,
  };
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
async function paidInvoicesOfPeriod(
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

/**
 * The switch credited `credit` TWD of the unused period: the paid invoices of that period give
 * it, so that none of it can be refunded as well (`apportionCredit`), in the switch's transaction.
 */
async function recordSwitchCredit(
  tx: EventStoreTransaction,
  context: ServiceContext,
  tenant: Tenant,
  subscription: Subscription,
  credit: number,
  switchId: string,
  now: Date,
): Promise<void> {
  if (credit <= 0) return;
  const { schema } = context.store.tables;
  const invoices = await paidInvoicesOfPeriod(tx, schema, tenant, subscription);
  for (const part of apportionCredit(invoices, credit)) {
    await handleCommandInTransaction(
      tx,
      context.store,
      invoiceStream(part.invoiceId),
      invoiceAggregate,
      { type: 'RecordInvoiceCredit', data: { key: `switch:${switchId}`, amount: part.amount, now } },
      { ...tenant, occurredAt: now, project: (inner, events) => projectInvoices(inner, schema, events) },
    );
  }
}

/** The credit of the unused period a proration invoice's lines carry (its `proration` line). */
const creditOfLines = (lines: InvoiceLine[]) =>
  -lines.filter((line) => line.kind === 'proration' && line.amount < 0).reduce((sum, line) => sum + line.amount, 0);

export function paidForPlan(invoice: Invoice): number {
  const planLines = invoice.lines.filter((line) => line.kind === 'subscription');
  const plan = planLines.length > 0 ? planLines.reduce((sum, line) => sum + line.amount, 0) : invoice.subtotal;
  const givenBack = (invoice.amount_refunded ?? 0) + (invoice.amount_credited ?? 0);
  return Math.max(0, plan - invoice.discount_amount - givenBack);
}

// ---------------------------------------------------------------- doing it

function refuseUnlessProceeding(state: Existing, preview: SwitchPreview): void {
  if (preview.can_proceed) return;
  const reason = preview.blocking_reason!;
  if (reason === 'no_payment_method') {
    throw new ApiError(402, 'payment_required', 'The customer has no saved card to pay the switch with', [
      { code: 'no_payment_method', message: 'The customer has no saved card' },
    ]);
  }
  const details: Record<string, unknown> = { blocking_reason: reason };
  let message = `Subscription ${state.subscription.id} cannot switch: ${reason}`;
  if (reason === 'pending_schedule' && state.schedule) {
    details.schedule_id = state.schedule.id;
    message = `Subscription ${state.subscription.id} has a pending schedule ${state.schedule.id}: cancel it before switching again`;
  }
  if (reason === 'switch_in_progress' && state.switching) {
    details.switch_id = state.switching.switch_id;
    throw paymentPending(
      `Subscription ${state.subscription.id} is switching: its charge is being confirmed, and nothing more will be charged`,
      [details],
    );
  }
  throw conflict(message, [details]);
}

/**
 * Locks the subscription's row for the switch's transaction, as a renewal locks it to open
 * its invoice; a renewal invoice of the period that is ending exists already: the renewal
 * went first, and this switch is 409 (preview again).
 */
async function lockForSwitch(tx: EventStoreTransaction, context: ServiceContext, subscription: Subscription) {
  const { schema } = context.store.tables;
  await tx.query(`SELECT id FROM ${subscriptionsTable(schema)} WHERE id = $1 FOR UPDATE`, [subscription.id]);
  const renewal = renewalInvoiceId(subscription.id, subscription.current_period_end);
  const { rows } = await tx.query(`SELECT 1 FROM ${invoicesTable(schema)} WHERE id = $1`, [renewal]);
  if (rows.length > 0) {
    throw conflict(`Subscription ${subscription.id} is renewing: preview the switch again`, [
      { blocking_reason: 'renewing' },
    ]);
  }
}

/** Runs the transaction; another writer of the subscription meanwhile is 409. */
async function inTransaction<T>(context: ServiceContext, work: (tx: EventStoreTransaction) => Promise<T>): Promise<T> {
  try {
    return await context.store.transaction(work);
  } catch (error) {
    if (isRetryableWriteError(error)) {
      throw conflict('The subscription changed meanwhile: preview the switch again', [{ blocking_reason: 'changed' }]);
    }
    throw error;
  }
}

function run(tx: EventStoreTransaction, context: ServiceContext, tenant: Tenant, command: SwitchingCommand) {
  const { store } = context;
  return handleCommandInTransaction(
    tx,
    store,
    subscriptionStream(command.data.subscriptionId),
    switchingAggregate,
    command,
    {
      ...tenant,
      occurredAt: command.data.now,
      project: (inner, events) => projectSubscriptions(inner, store.tables.schema, events),
    },
  );
}

/** Outside a transaction, retried on a version conflict (decided again on the new history). */
export function onSubscription(context: ServiceContext, tenant: Tenant, command: SwitchingCommand) {
  const { store } = context;
  return handleCommand(store, subscriptionStream(command.data.subscriptionId), switchingAggregate, command, {
    ...tenant,
    occurredAt: command.data.now,
    project: (tx, events) => projectSubscriptions(tx, store.tables.schema, events),
  });
}

async function recordBalance(
  tx: EventStoreTransaction,
  context: ServiceContext,
  tenant: Tenant,
  subscription: Subscription,
  planned: PlannedSwitch,
  switchId: string,
  invoiceId: string | null,
  now: Date,
) {
  if (planned.balanceChange === 0) return;
  await changeBalance(tx, context.store, {
    type: 'ChangeBalance',
    data: {
      customer_id: subscription.customer_id,
      ...tenant,
      amount: planned.balanceChange,
      reason: planned.balanceChange > 0 ? 'switch_credit' : 'switch_deferred_charge',
      subscription_id: subscription.id,
      invoice_id: invoiceId,
      key: `switch:${switchId}`,
      now,
    },
  });
}

/** The proration invoice's lines: the unused days' credit, the new plan's period, any surplus to the balance. */
function prorationLines(
  subscription: Subscription,
  target: ScheduledPlan,
  planned: PlannedSwitch,
  period: { start: string; end: string },
): InvoiceLine[] {
  const proration = planned.preview.proration!;
  const every = target.interval_count === 1 ? target.interval : `${target.interval_count} ${target.interval}s`;
  const lines: InvoiceLine[] = [];
  if (proration.credit_amount > 0) {
    lines.push({
      description: proration.credit_description,
      amount: -proration.credit_amount,
      period: { start: subscription.current_period_start, end: subscription.current_period_end },
      kind: 'proration',
    });
  }
  lines.push({ description: `${target.name} (every ${every})`, amount: target.price, period, kind: 'subscription' });
  if (planned.balanceChange > 0) {
    lines.push({
      description: 'Unused credit to the customer balance',
      amount: planned.balanceChange,
      period,
      kind: 'customer_balance',
    });
  }
  return lines;
}

/** The processor idempotency key of a switch's one charge: its proration invoice, attempt 1. */
export const switchChargeKey = (invoiceId: string) => invoiceChargeKey(invoiceId, 1);
