import type { InvoiceLine } from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import type { Tenant } from '@billing/service';
import { customerBalanceAggregate } from './aggregate';
import { balanceLine, balancesTable } from './balance';

/**
 * In the transaction that opens a renewal invoice (engine/renewals/): locks the customer's
 * balance row, and answers the invoice's balance line and records the change, keyed by the
 * invoice (so a second opener of the same invoice changes nothing). Null when the balance is 0.
 */
export async function takeBalanceForInvoice(
  tx: EventStoreTransaction,
  store: EventStore,
  tenant: Tenant,
  input: {
    customerId: string;
    subscriptionId: string;
    invoiceId: string;
    amount: number;
    period: { start: string; end: string };
    now: Date;
  },
): Promise<InvoiceLine | null> {
  const { schema } = store.tables;
  const { rows } = await tx.query<{ balance: number }>(
    `SELECT balance FROM ${balancesTable(schema)} WHERE customer_id = $1 AND organization = $2 AND environment = $3 FOR UPDATE`,
    [input.customerId, tenant.organization, tenant.environment],
  );
  const balance = rows[0]?.balance ?? 0;
  const taken = balanceLine(balance, input.amount, input.period);
  if (!taken) return null;
  await customerBalanceAggregate.handleInTransaction(
    tx,
    store,
    input.customerId,
    {
      type: 'ChangeBalance',
      data: {
        customer_id: input.customerId,
        ...tenant,
        amount: taken.change,
        reason: 'applied_to_invoice',
        subscription_id: input.subscriptionId,
        invoice_id: input.invoiceId,
        key: `invoice:${input.invoiceId}`,
        now: input.now,
      },
    },
    { ...tenant, occurredAt: input.now },
  );
  return taken.line;
}
