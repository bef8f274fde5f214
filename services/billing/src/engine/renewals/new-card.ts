import { type Invoice, type SavedPaymentMethod, type Subscription, notFound } from '@billing/contracts';
import { handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { customerStream } from '../../customers/customer';
import { customerAggregate } from '../../customers/decide';
import { projectCustomers } from '../../customers/read-model';
import { invoicesTable } from '../../invoices/read-model';
import { subscriptionsTable } from '../../subscriptions/read-model';
import { timeOn } from '../../test-clocks/read-model';
import { retryOpenInvoice } from './renew';

/** What `PUT /internal/customers/{id}/default_payment_method` and `setDefaultPaymentMethod` answer. */
export type DefaultPaymentMethodSet = {
  object: 'default_payment_method';
  customer_id: string;
  payment_method: SavedPaymentMethod;
  /** The open invoices of the customer's PAST_DUE subscriptions, as the retry with the new card left them. */
  retried_invoices: Invoice[];
};

/**
 * Makes `paymentMethod` the card the customer's renewals charge (`CustomerPaymentMethodSaved`
 * on the customer's stream), then retries at once, with it, every open invoice of the
 * customer's PAST_DUE subscriptions (`retryOpenInvoice`): paid, the subscription is ACTIVE
 * again. For the customer portal, in process, and behind the internal route. An unknown
 * customer (or another organization's or environment's) is 404.
 */
export async function setDefaultPaymentMethod(
  context: ServiceContext,
  tenant: Tenant,
  customerId: string,
  paymentMethod: SavedPaymentMethod,
): Promise<DefaultPaymentMethodSet> {
  const { store } = context;
  const { schema } = store.tables;
  const history = await store.readStream(customerStream(customerId));
  const current = history.reduce(customerAggregate.evolve, customerAggregate.initialState());
  if (
    current.status === 'Empty' ||
    current.organization !== tenant.organization ||
    current.environment !== tenant.environment
  ) {
    throw notFound(`No such customer: ${customerId}`);
  }
  const savedAt = await timeOn(store.database, schema, tenant, current.customer.test_clock, context.now);
  await handleCommand(
    store,
    customerStream(customerId),
    customerAggregate,
    { type: 'SavePaymentMethod', data: { customerId, ...tenant, now: savedAt, paymentMethod } },
    { ...tenant, occurredAt: savedAt, project: (tx, events) => projectCustomers(tx, schema, events) },
  );

  const retried: Invoice[] = [];
  for (const { subscription, invoice } of await openInvoicesOfPastDue(context, customerId)) {
    const at = await timeOn(store.database, schema, tenant, subscription.test_clock, context.now);
    retried.push(await retryOpenInvoice(context, tenant, subscription, invoice, at));
  }
  return {
    object: 'default_payment_method',
    customer_id: customerId,
    payment_method: paymentMethod,
    retried_invoices: retried,
  };
}

async function openInvoicesOfPastDue(context: ServiceContext, customerId: string) {
  const { schema } = context.store.tables;
  const { rows } = await context.store.database.query<{ subscription: Subscription; invoice: Invoice }>(
    `SELECT s.document AS subscription, i.document AS invoice
     FROM ${subscriptionsTable(schema)} s JOIN ${invoicesTable(schema)} i ON i.subscription_id = s.id
     WHERE s.customer_id = $1 AND s.status = 'PAST_DUE' AND i.status = 'open'
     ORDER BY i.created_at, i.id`,
    [customerId],
  );
  return rows;
}
