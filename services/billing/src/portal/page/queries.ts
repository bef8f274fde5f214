import type { SavedPaymentMethod } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { customersTable } from '../../customers/read-model';

/** The card renewals charge, if the customer has one saved. */
export async function savedPaymentMethod(
  sql: SqlExecutor,
  schema: string,
  tenant: Tenant,
  customerId: string,
): Promise<SavedPaymentMethod | null> {
  const { rows } = await sql.query<{ payment_method: SavedPaymentMethod | null }>(
    `SELECT payment_method FROM ${customersTable(schema)} WHERE id = $1 AND organization = $2 AND environment = $3`,
    [customerId, tenant.organization, tenant.environment],
  );
  return rows[0]?.payment_method ?? null;
}
