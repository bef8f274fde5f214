import { CHECKOUT_PUBLIC_EVENTS, CHECKOUT_TOPIC } from '@billing/contracts';
import { exactlyOnce } from '@billing/bus';
import type { ServiceContext } from '@billing/runtime';
import { provisionFromCheckout } from './checkout-completed';

/**
 * Billing's consumer group on `checkout.events`: each paid checkout is provisioned exactly
 * once, its effects committed with the inbox row, so a redelivered event changes nothing.
 */
export async function startConsumers(context: ServiceContext): Promise<Array<() => Promise<void>>> {
  const { store, infrastructure, now, logger } = context;
  // The group is the service's schema: `billing` in production, one per test schema.
  const groupId = store.tables.schema.replaceAll('"', '');
  const subscription = await infrastructure.bus.subscribe({
    groupId,
    topics: [CHECKOUT_TOPIC],
    handler: exactlyOnce(store, groupId, (event, tx) => provisionFromCheckout(store, tx, event, now(), logger), {
      only: [CHECKOUT_PUBLIC_EVENTS.CheckoutSessionCompleted],
    }),
  });
  return [() => subscription.stop()];
}
