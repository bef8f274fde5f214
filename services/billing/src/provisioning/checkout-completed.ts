import { CheckoutSessionCompletedData, type DomainEventEnvelope, newId } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import { type Logger, Tenant } from '@billing/service';
import { grantPurchasedCredits } from '../credits/purchase';
import { customerAggregate } from '../customers/aggregate';
import type { CustomerCommand } from '../customers/decide';
import { externalIdHolder, findCustomer } from '../customers/queries';
import { usableExternalId, usableName } from '../customers/resolve';
import { inSequence, startStream } from '../shared/commands';
import { einvoiceForCheckout } from '../einvoices/request';
import { invoiceAggregate } from '../invoices/aggregate';
import type { InvoicesNumberedAtEnd } from '../invoices/numbered-at-end';
import { subscriptionAggregate } from '../subscriptions/aggregate';
import type { PlanFacts, SubscriptionCommand } from '../subscriptions/decide';
import { liveSubscriptions } from '../subscriptions/queries';
import { findTestClock } from '../test-clocks/read-model';

/**
 * The process manager of a paid checkout (`checkout.completed`), run in the consumer's inbox
 * transaction so that all of it happens exactly once:
 * 1. find the customer checkout resolved (`customer_id`), else the one with the email in the
 *    organization and environment, or create it; an external id is applied to a new customer, or to a found one that has none, unless
 *    another customer holds it; a found customer's data is never changed otherwise;
 * 2. count the order on the customer (`orders_count`); a CREDITS product grants its credits;
 * 3. in SUBSCRIPTION mode: start the subscription (with the id checkout gave it) and record the
 *    paid invoice of its first period (numbered at the transaction's end:
 *    `InvoicesNumberedAtEnd`), or, when the customer already has a live subscription to the
 *    product, record `DuplicateSubscriptionPaid` on it (checkout refunds the order) and start
 *    nothing.
 */
export async function provisionFromCheckout(
  store: EventStore,
  tx: EventStoreTransaction,
  event: DomainEventEnvelope,
  now: Date,
  logger: Logger | undefined,
  /** Told when the checkout asked an e-invoice for something (after its transaction, the worker runs). */
  einvoiceAsked: () => void,
  /** Where the paid invoice goes, to be numbered and recorded at the transaction's end. */
  invoices: InvoicesNumberedAtEnd,
): Promise<void> {
  const parsed = CheckoutSessionCompletedData.safeParse(event.data);
  if (!parsed.success) {
    // No retry makes a payload of the wrong shape valid; it is reported instead of retried.
    logger?.error(
      { eventId: event.id, issues: parsed.error.issues },
      'checkout.completed payload does not match its schema; skipped',
    );
    return;
  }
  const d = parsed.data;
  // A session without an email (none collected) has nobody to provision.
  if (!d.customer_email) return;
  const schema = store.tables.schema;
  const tenant: Tenant = { organization: event.organization, environment: event.environment };
  const who = (customerId: string) => ({ customerId, ...tenant, now });

  const externalId = usableExternalId(d.external_customer_id);
  const holder = externalId ? await externalIdHolder(tx, schema, tenant, externalId) : null;
  // Checkout resolved the buyer before charging (docs/customer-identity.md); events of older
  // sessions, or of a checkout without billing configured, name them by email only.
  const found =
    (d.customer_id ? await findCustomer(tx, schema, tenant, { by: 'id', value: d.customer_id }) : undefined) ??
    (await findCustomer(tx, schema, tenant, { by: 'email', value: d.customer_email }));
  // Sandbox: a customer on a test clock lives on it, and so do its later subscriptions; a new
  // customer made by a session on a test clock is put on it. Everything starts at the clock's time.
  const clockId = found?.test_clock ?? d.test_clock;
  const clock = clockId ? await findTestClock(tx, schema, tenant, clockId) : undefined;
  const serviceNow = now;
  if (clock) now = new Date(clock.frozen_time);
  const customerId = found?.id ?? newId('customer');
  // Everything the checkout does to the customer, decided in turn and appended at once.
  const customerCommands: CustomerCommand[] = [];
  if (!found) {
    customerCommands.push({
      type: 'CreateCustomer',
      data: {
        ...who(customerId),
        email: d.customer_email.trim(),
        name: usableName(d.customer_name),
        externalId,
        externalIdTakenBy: holder,
        testClock: clock?.id ?? null,
      },
    });
  } else if (externalId && holder !== customerId) {
    customerCommands.push({
      type: 'LinkExternalId',
      data: { ...who(customerId), externalId, externalIdTakenBy: holder },
    });
  }
  customerCommands.push({
    type: 'RecordOrder',
    data: { ...who(customerId), orderId: d.order_id, checkoutSessionId: d.session_id },
  });
  // The card paid with becomes the one renewals charge (the processor's reference, never the number).
  const card = d.payment_method;
  if (card?.id && d.mode !== 'PAYMENT') {
    customerCommands.push({
      type: 'SavePaymentMethod',
      data: { ...who(customerId), paymentMethod: { ...card, id: card.id } },
    });
  }
  const customerOptions = { ...tenant, occurredAt: now };
  const customerCommandsAggregate = inSequence(customerAggregate);
  if (found) {
    await customerCommandsAggregate.handleInTransaction(tx, store, customerId, customerCommands, customerOptions);
  } else {
    await startStream(tx, store, customerCommandsAggregate, customerId, customerCommands, customerOptions);
  }
  // E-invoices keep to the service's clock: their deadlines are real, test clock or not.
  if (await einvoiceForCheckout(store, tx, tenant, customerId, d, serviceNow)) einvoiceAsked();
  await grantPurchasedCredits(tx, store, tenant, customerId, d, now);

  // The plan as the session sold it: later catalog changes do not move a sale.
  const product = d.product;
  const mode = d.mode ?? (product?.type === 'SUBSCRIPTION' ? 'SUBSCRIPTION' : 'PAYMENT');
  if (mode !== 'SUBSCRIPTION') return;
  if (!product || product.interval === null) {
    logger?.error({ eventId: event.id, productId: d.product_id }, 'checkout.completed names no plan; no subscription');
    return;
  }
  const plan: PlanFacts = { ...product, interval: product.interval };

  const onSubscription = (subscriptionId: string, command: SubscriptionCommand) =>
    subscriptionAggregate.handleInTransaction(tx, store, subscriptionId, command, { ...tenant, occurredAt: now });
  const existing = (await liveSubscriptions(tx, schema, customerId, plan.id))[0];
  if (existing) {
    await onSubscription(existing.id, {
      type: 'RecordDuplicatePayment',
      data: {
        subscriptionId: existing.id,
        ...tenant,
        now,
        checkoutSessionId: d.session_id,
        orderId: d.order_id,
        customerId,
        productId: plan.id,
        amountTotal: d.amount_total,
      },
    });
    return;
  }

  // Checkout names the subscription in `checkout.completed` so that the event can carry it.
  const subscriptionId = d.subscription_id ?? newId('subscription');
  const { state } = await onSubscription(subscriptionId, {
    type: 'StartSubscription',
    data: {
      subscriptionId,
      ...tenant,
      now,
      customerId,
      plan,
      checkoutSessionId: d.session_id,
      orderId: d.order_id,
      testClock: clock?.id ?? null,
      trialDays: d.trial_days,
      coupon: d.coupon ?? null,
    },
  });
  if (state.status === 'Empty') return;
  const invoiceId = newId('invoice');
  const period = { start: state.subscription.current_period_start, end: state.subscription.current_period_end };
  // A new invoice id: its stream is started without reading it.
  const recordInvoice = async (number: string) => {
    await startStream(
      tx,
      store,
      invoiceAggregate,
      invoiceId,
      {
        type: 'RecordPaidInvoice',
        data: {
          invoiceId,
          number,
          ...tenant,
          customerId,
          subscriptionId,
          orderId: d.order_id,
          checkoutSessionId: d.session_id,
          lines: [
            { description: planLine(plan, d.trial_days), amount: d.amount_subtotal, period, kind: 'subscription' },
          ],
          amountDiscount: d.discount_amount,
          amountTotal: d.amount_total,
          periodStart: state.subscription.current_period_start,
          periodEnd: state.subscription.current_period_end,
          paidAt: clock ? now.toISOString() : (d.completed_at ?? now.toISOString()),
          charge: d.charge,
          now,
        },
      },
      { ...tenant, occurredAt: now },
    );
  };
  invoices.add(tenant, recordInvoice);
}

/** `Pro (every month)`, `Team (every 3 months)`, `Pro (14-day free trial)`: what an invoice line is for. */
function planLine(plan: PlanFacts, trialDays = 0): string {
  if (trialDays > 0) return `${plan.name} (${trialDays}-day free trial)`;
  const every = plan.interval_count === 1 ? plan.interval : `${plan.interval_count} ${plan.interval}s`;
  return `${plan.name} (every ${every})`;
}
