import { BILLING_PUBLIC_EVENTS, type DomainEventEnvelope } from '@billing/contracts';
import { exactlyOnce } from '@billing/bus';
import type { EventStoreTransaction } from '@billing/eventstore';
import { type ServiceContext, topicOf } from '@billing/runtime';
import { refundCharge } from '../payments/refund-at-processor';
import { merchantTradeNo } from '../payments/ecpay/aio';
import { cancelEcpayPlan, unclaimedPeriods } from '../payments/ecpay-plans';
import { runSessionCommands } from './command';
import { EINVOICE_SETTINGS_CONFIGURED, recordEinvoiceSettings } from './einvoice-enabled';
import { ORDER_EINVOICE_EVENTS, recordOrderEinvoice } from './order-einvoices';
import { ecpayMerchantOf } from '../payments/settings/merchant-of';
import { chargeKeyOfPaid } from '../refunds/order';
import { heldAmount } from '../refunds/refund';
import type { SessionCommand } from './decide';
import { findSession } from './queries';
import { sessionAggregate } from './aggregate';
import { DUPLICATE_SUBSCRIPTION, type Session } from './session';

export const BILLING_TOPIC = topicOf('billing');

/** Billing's internal event when a paid checkout duplicates a live subscription (see billing's README). */
export const DUPLICATE_SUBSCRIPTION_PAID = 'DuplicateSubscriptionPaid';

/**
 * What checkout learns from billing: the subscription a paid session created (the session's
 * `subscription_id`), a payment billing would not turn into a second subscription, which
 * checkout refunds, a subscription that ended, whose ECPay card plan checkout stops, whether
 * the organization issues e-invoices (`einvoice_enabled`), and the e-invoice issued for an order
 * (its thank-you page). Each effect on a session commits with its inbox row.
 */
export async function startBillingConsumer(context: ServiceContext): Promise<() => Promise<void>> {
  const { store, infrastructure } = context;
  const groupId = store.tables.schema.replaceAll('"', '');
  const record = exactlyOnce(store, groupId, (event, tx) => onBillingEvent(context, tx, event), {
    only: [
      BILLING_PUBLIC_EVENTS.SubscriptionActivated,
      DUPLICATE_SUBSCRIPTION_PAID,
      EINVOICE_SETTINGS_CONFIGURED,
      ...ORDER_EINVOICE_EVENTS,
    ],
  });
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: [BILLING_TOPIC],
    handler: async (message) => {
      // The processor is asked before the inbox transaction, never inside it: a real one is a
      // remote call, and the sandbox's ledger writes on its own connection (PGlite has one).
      await refundDuplicateAtProcessor(context, message.value);
      await stopPlanAtProcessor(context, message.value);
      await record(message);
    },
  });
  return () => subscription.stop();
}

/**
 * A duplicate subscription's payment is refunded at the processor first (its ECPay card plan
 * stopped before), keyed by the order:
 * a redelivery (the transaction that records it failed, or a crash in between) asks for the
 * same refund and gets the first one; once recorded, the order is no longer PAID and nothing is
 * asked again.
 */
async function refundDuplicateAtProcessor(context: ServiceContext, event: DomainEventEnvelope) {
  if (event.type !== DUPLICATE_SUBSCRIPTION_PAID) return;
  const sessionId = typeof event.data.checkout_session_id === 'string' ? event.data.checkout_session_id : null;
  if (!sessionId) return;
  const { store } = context;
  const session = await findSession(store.database, store.tables.schema, sessionId);
  if (!session || session.organization !== event.organization || session.environment !== event.environment) return;
  // The duplicate's card plan at ECPay would go on charging: stopped first, then refunded.
  await stopEcpayPlan(context, session);
  if (session.order.status !== 'PAID') return;
  await refundAtProcessor(context, session);
}

/**
 * A subscription paid through ECPay's card plan has ended: the plan is stopped at ECPay, which
 * would otherwise go on charging the buyer. Asked again on redelivery; a plan stopped already is
 * answered as stopped. ECPay not answering throws, and the bus retries (then parks the message
 * for a person).
 */
async function stopPlanAtProcessor(context: ServiceContext, event: DomainEventEnvelope) {
  if (event.type !== BILLING_PUBLIC_EVENTS.SubscriptionCanceled) return;
  const sessionId = (event.data.object as { checkout_session_id?: unknown } | undefined)?.checkout_session_id;
  if (typeof sessionId !== 'string') return;
  const session = await findSession(context.store.database, context.store.tables.schema, sessionId);
  if (!session || session.organization !== event.organization || session.environment !== event.environment) return;
  await stopEcpayPlan(context, session);
}

/** Stops the card plan at ECPay of a subscription checkout paid through it; nothing for any other session. */
async function stopEcpayPlan(context: ServiceContext, session: Session) {
  if (session.mode !== 'SUBSCRIPTION' || session.charge?.processor !== 'ecpay') return;
  const ecpay = await ecpayMerchantOf(context, session.organization, session.environment);
  const tradeNo = merchantTradeNo(session.charge.key);
  if (!ecpay) {
    context.logger.error(
      { session: session.id, trade: tradeNo },
      "ECPay is no longer set: stop this card plan in ECPay's site",
    );
    return;
  }
  if (!(await cancelEcpayPlan(context, ecpay.merchant, tradeNo))) {
    throw new Error(`ECPay did not confirm stopping the card plan ${tradeNo}; asked again`);
  }
  // Periods ECPay charged that no invoice took (charged before the stop, for a renewal that never
  // asked): listed for a refund by hand, once each.
  const now = context.now();
  const unclaimed = await unclaimedPeriods(context, ecpay.merchant, tradeNo);
  if (unclaimed.length === 0) return;
  context.logger.error(
    { session: session.id, trade: tradeNo, periods: unclaimed.length },
    'ECPay charged periods no invoice took: refund them',
  );
  await runSessionCommands(
    context,
    session.id,
    null,
    unclaimed.map((period) => ({
      type: 'RecordUnmatchedPayment' as const,
      data: {
        processor: 'ecpay' as const,
        tradeNo: period.tradeNo,
        amount: period.amount,
        reason: 'period_not_invoiced' as const,
        now,
      },
    })),
    { organization: session.organization, environment: session.environment, occurredAt: now },
  );
}

async function onBillingEvent(context: ServiceContext, tx: EventStoreTransaction, event: DomainEventEnvelope) {
  const { schema } = context.store.tables;
  if (event.type === EINVOICE_SETTINGS_CONFIGURED) return recordEinvoiceSettings(tx, schema, event);
  if (ORDER_EINVOICE_EVENTS.includes(event.type)) return recordOrderEinvoice(tx, schema, event);
  const sessionId = typeof event.data.checkout_session_id === 'string' ? event.data.checkout_session_id : null;
  if (!sessionId) return;
  if (event.type === BILLING_PUBLIC_EVENTS.SubscriptionActivated) {
    const subscriptionId = (event.data.object as { id?: unknown } | undefined)?.id;
    if (typeof subscriptionId !== 'string') return;
    // A session completed with the subscription's id (the usual case) is linked already.
    return onSession(context, tx, event, sessionId, (session) =>
      session.subscription_id === subscriptionId
        ? null
        : { type: 'LinkSubscription', data: { subscriptionId, now: context.now() } },
    );
  }
  if (event.type === DUPLICATE_SUBSCRIPTION_PAID) {
    return onSession(context, tx, event, sessionId, async (session) => {
      // Refunded at the processor before this transaction (`refundDuplicateAtProcessor`).
      if (session.order.status !== 'PAID') return null;
      return { type: 'RecordRefund', data: { reason: DUPLICATE_SUBSCRIPTION, now: context.now() } };
    });
  }
}

/** A session of another organization or environment than the event's is left alone. */
async function onSession(
  context: ServiceContext,
  tx: EventStoreTransaction,
  event: DomainEventEnvelope,
  sessionId: string,
  /** The command for the session, or null when there is nothing to do. */
  commandFor: (session: Session) => SessionCommand | null | Promise<SessionCommand | null>,
) {
  const { store } = context;
  const session = await findSession(tx, store.tables.schema, sessionId);
  if (!session || session.organization !== event.organization || session.environment !== event.environment) return;
  const command = await commandFor(session);
  if (!command) return;
  await sessionAggregate.handleInTransaction(tx, store, sessionId, command, {
    organization: session.organization,
    environment: session.environment,
    occurredAt: context.now(),
  });
}

/**
 * Keyed by the order: a redelivery after a crash asks for the same refund, never a second one.
 * What the merchant's refunds gave back (or hold) already is not refunded again.
 */
async function refundAtProcessor(context: ServiceContext, session: Session) {
  const amount = session.order.amount_total - heldAmount(session.refunds ?? []);
  if (amount <= 0) return;
  const result = await refundCharge(context, session, {
    idempotencyKey: session.order.id,
    environment: session.environment,
    chargeKey: chargeKeyOfPaid(session),
    amount,
    now: context.now(),
  });
  if (result.status !== 'succeeded') throw new Error(`refund of ${session.order.id} failed: ${result.message}`);
}
