import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { creditsAggregate } from './aggregate';
import { ledgerSettingsOf } from './ledger-settings';
import { hasExpiryDue } from './queries';

/**
 * Enough attempts for every spend of a burst on one customer to be decided on a fresh state:
 * each failed attempt means another command on the ledger got in, and a refused spend stops.
 */
export const CREDITS_MAX_ATTEMPTS = 200;

/** Records the expiry of the customer's grants due at `now` (the customer's clock), if any. */
export async function expireDue(context: ServiceContext, tenant: Tenant, customerId: string, now: Date) {
  const { store } = context;
  if (!(await hasExpiryDue(store.database, store.tables.schema, customerId, now))) return;
  await creditsAggregate.handle(
    store,
    customerId,
    { type: 'ExpireCredits', data: { customerId, now, ...(await ledgerSettingsOf(store, tenant)) } },
    { ...tenant, occurredAt: now, maxAttempts: CREDITS_MAX_ATTEMPTS },
  );
}
