import { CHECKOUT_PUBLIC_EVENTS, CHECKOUT_TOPIC } from '@billing/contracts';
import { exactlyOnce } from '@billing/bus';
import type { ServiceContext } from '@billing/runtime';
import { recordCheckoutRefund } from '../invoices/refund-consumer';
import { provisionFromCheckout } from './checkout-completed';

/**
 * Billing's consumer group on `checkout.events`: each paid checkout is provisioned exactly
 * once, its effects committed with the inbox row, so a redelivered event changes nothing.
 * Refunds (`refund.updated`) run in the same group, so an order's refund reaches its invoice
 * after the completion that recorded it.
 */
export async function startConsumers(context: ServiceContext): Promise<Array<() => Promise<void>>> {
  const { store, infrastructure, now, logger } = context;
  // The group is the service's schema: `billing` in production, one per test schema.
  const groupId = store.tables.schema.replaceAll('"', '');
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: [CHECKOUT_TOPIC],
    handler: exactlyOnce(
      store,
      groupId,
      (event, tx) =>
        event.type === CHECKOUT_PUBLIC_EVENTS.RefundSucceeded
          ? recordCheckoutRefund(store, tx, event, logger)
          : provisionFromCheckout(store, tx, event, now(), logger),
      { only: [CHECKOUT_PUBLIC_EVENTS.CheckoutSessionCompleted, CHECKOUT_PUBLIC_EVENTS.RefundSucceeded] },
    ),
  });
  return [() => subscription.stop()];
}
