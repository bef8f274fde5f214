import type { Subscription } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { subscriptionAggregate } from './aggregate';
import type { CancelSubscription, ResumeSubscription } from './decide';
import { timeOn } from '../test-clocks/read-model';
import { currentSubscription, findSubscription } from './queries';

/**
 * Runs a customer-facing change (the merchant's API call, or the customer's in the portal) on
 * the subscription and returns it as it is after. One path for both, so both publish the same
 * events and webhooks.
 */
async function change(
  context: ServiceContext,
  tenant: Tenant,
  id: string,
  command: CancelSubscription | ResumeSubscription,
): Promise<Subscription> {
  const { store } = context;
  await subscriptionAggregate.handle(store, id, command, {
    organization: tenant.organization,
    environment: tenant.environment,
    occurredAt: command.data.now,
  });
  return currentSubscription(context, tenant, id);
}

/** Who asks, and when: on the subscription's test clock when it is on one. */
async function requestOf(context: ServiceContext, tenant: Tenant, id: string) {
  const { store } = context;
  const found = await findSubscription(store.database, store.tables.schema, tenant, id);
  const now = await timeOn(store.database, store.tables.schema, tenant, found?.test_clock, context.now);
  return { subscriptionId: id, organization: tenant.organization, environment: tenant.environment, now };
}

/** Cancels at the end of the paid period, or now; see `decide`'s `cancel`. */
export async function cancelSubscription(context: ServiceContext, tenant: Tenant, id: string, atPeriodEnd: boolean) {
  const who = await requestOf(context, tenant, id);
  return change(context, tenant, id, { type: 'CancelSubscription', data: { ...who, atPeriodEnd } });
}

/** Undoes a pending end-of-period cancellation. */
export async function resumeSubscription(context: ServiceContext, tenant: Tenant, id: string) {
  return change(context, tenant, id, { type: 'ResumeSubscription', data: await requestOf(context, tenant, id) });
}
