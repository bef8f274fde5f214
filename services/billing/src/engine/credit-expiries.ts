import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { expireDue } from '../credits/expire';
import { creditTables } from '../credits/read-model';
import { customersTable } from '../customers/read-model';

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
