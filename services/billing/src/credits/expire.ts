import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { customersTable } from '../customers/read-model';
import { creditsAggregate } from './aggregate';
import { ledgerSettingsOf } from './ledger-settings';
import { hasExpiryDue } from './queries';
import { creditTables } from './read-model';

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

/** How many customers one sweep expires grants of; the rest wait for the next sweep. */
const SWEEP_BATCH = 500;

/**
 * The sweep's part: grants past their expiry by the service clock, of customers on no test
 * clock (a test-clock customer's grants expire when a command or a read of theirs sees its clock
 * past them). A failure is logged and left to the next sweep.
 */
export async function expireDueCredits(context: ServiceContext): Promise<void> {
  const { store, logger } = context;
  const { schema } = store.tables;
  const now = context.now();
  const { rows } = await store.database.query<Tenant & { customer_id: string }>(
    `SELECT DISTINCT g.customer_id, g.organization, g.environment
     FROM ${creditTables(schema).grants} g JOIN ${customersTable(schema)} c ON c.id = g.customer_id
     WHERE g.remaining > 0 AND g.expires_at <= $1 AND c.document->>'test_clock' IS NULL
     LIMIT ${SWEEP_BATCH}`,
    [now],
  );
  for (const { customer_id: customerId, organization, environment } of rows) {
    try {
      await expireDue(context, { organization, environment }, customerId, now);
    } catch (err) {
      logger.error({ err, customerId }, 'expiring credits failed; the next sweep retries');
    }
  }
}
