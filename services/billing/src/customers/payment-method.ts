import {
  type Invoice,
  type SavedPaymentMethod,
  SetDefaultPaymentMethodBody,
  type Subscription,
  notFound,
  validationError,
} from '@billing/contracts';
import { handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, callerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { invoicesTable } from '../invoices/read-model';
import { retryOpenInvoice } from '../renewals/renew';
import { subscriptionsTable } from '../subscriptions/read-model';
import { timeOn } from '../test-clocks/read-model';
import { customerStream } from './customer';
import { customerAggregate } from './decide';
import { projectCustomers } from './read-model';

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

/**
 * A sandbox reference carries the card's last4 and expiry (`pm_sandbox_<behaviour>_<last4>_<MMYYYY>_<random>`),
 * so a bare one is enough; any other bare reference is refused (send the card as checkout answered it).
 */
export function paymentMethodOf(value: SetDefaultPaymentMethodBody['payment_method']): SavedPaymentMethod {
  if (typeof value !== 'string') {
    const { id, brand, last4, exp_month, exp_year } = value;
    return { id, brand, last4, exp_month, exp_year };
  }
  const match = /^pm_sandbox_[a-z]+_([0-9]{4})_([0-9]{2})([0-9]{4})_[A-Za-z0-9]+$/.exec(value);
  if (!match) {
    const message = 'Send the payment method as POST /internal/payment_methods answered it';
    throw validationError([{ path: 'payment_method', code: 'invalid_value', message }], message);
  }
  return { id: value, brand: 'visa', last4: match[1]!, exp_month: Number(match[2]), exp_year: Number(match[3]) };
}

const CustomerIdParams = z.object({ id: z.string().min(1).max(255) });

/** `PUT /internal/customers/{id}/default_payment_method` `{ payment_method }` (signed service calls). */
export function mountDefaultPaymentMethodRoute(app: Express, context: ServiceContext): void {
  app.put(
    '/internal/customers/:id/default_payment_method',
    validate({ params: CustomerIdParams, body: SetDefaultPaymentMethodBody }),
    async (req, res) => {
      const caller = callerOf(req);
      const tenant = { organization: caller.organization, environment: caller.environment };
      const { id } = res.locals.input.params;
      const paymentMethod = paymentMethodOf(res.locals.input.body.payment_method);
      res.json(await setDefaultPaymentMethod(context, tenant, id, paymentMethod));
    },
  );
}
