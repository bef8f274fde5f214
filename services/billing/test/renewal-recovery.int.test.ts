import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { renewDue } from '../src/engine/renewals/renew';
import { invoiceAggregate } from '../src/invoices/aggregate';
import { type InvoiceCommand } from '../src/invoices/invoice';
import { caller, client, feeds, newOrg } from './helpers';

/**
 * A renewal cut short between its invoice and its subscription (a crash after the charge's
 * answer was recorded on the invoice, before the subscription followed) goes on from the
 * invoice as it is when the engine looks again (`nextStep`): paid, the subscription enters the
 * period; the last attempt failed, dunning ends it; closed unpaid, it ends.
 */
jest.setTimeout(60_000);

let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(billingService, { config: { BILLING_TRIAL_SWEEP_INTERVAL_MS: '3600000' } });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);

/** A subscription whose first renewal was declined (no saved card): PAST_DUE, its invoice open. */
async function pastDue(email: string) {
  const org = newOrg();
  await paid(org, { product_id: await product(org), customer_email: email });
  const subscription = await eventually(async () => {
    const list = await call('GET', '/v1/subscriptions', caller(org));
    expect(list.body.subscriptions).toHaveLength(1);
    return list.body.subscriptions[0];
  });
  const at = new Date(subscription.current_period_end);
  const item = { id: subscription.id, organization: org, environment: 'SANDBOX' as const, due_at: at };
  await renewDue(running.service.context, item, at);
  const [open] = (await call('GET', `/v1/invoices?subscription_id=${subscription.id}&status=open`, caller(org))).body
    .data;
  expect(open).toMatchObject({ attempt_count: 1 });
  const onInvoice = (command: InvoiceCommand) =>
    invoiceAggregate.handle(running.service.context.store, open.id, command, {
      organization: org,
      environment: 'SANDBOX',
      occurredAt: at,
    });
  const subscriptionNow = async () => (await call('GET', `/v1/subscriptions/${subscription.id}`, caller(org))).body;
  const renewAgain = () => renewDue(running.service.context, item, at);
  return {
    open,
    at,
    onInvoice,
    subscriptionNow,
    renewAgain,
    invoice: () => call('GET', `/v1/invoices/${open.id}`, caller(org)),
  };
}

it('given the retry paid the invoice and the subscription did not follow, when the engine looks again, then it renews', async () => {
  const { open, at, onInvoice, subscriptionNow, renewAgain } = await pastDue('paid@example.com');
  await onInvoice({
    type: 'RecordPaymentAttempt',
    data: { attempt: 2, outcome: { status: 'succeeded' }, nextAttemptAt: null, now: at },
  });
  expect(await renewAgain()).toBe(true);
  expect(await subscriptionNow()).toMatchObject({ status: 'ACTIVE', current_period_start: open.period_start });
});

it('given the last attempt was declined and dunning did not end, when the engine looks again, then it ends both', async () => {
  const { at, onInvoice, subscriptionNow, renewAgain, invoice } = await pastDue('last@example.com');
  await onInvoice({
    type: 'RecordPaymentAttempt',
    data: {
      attempt: 2,
      outcome: { status: 'declined', code: 'card_declined', message: 'Declined' },
      nextAttemptAt: null,
      now: at,
    },
  });
  expect(await renewAgain()).toBe(true);
  expect((await invoice()).body.status).toBe('uncollectible');
  expect((await subscriptionNow()).status).toBe('CANCELED');
});

it('given the invoice was closed unpaid and the subscription did not follow, when the engine looks again, then it ends', async () => {
  const { at, onInvoice, subscriptionNow, renewAgain } = await pastDue('closed@example.com');
  await onInvoice({ type: 'MarkUncollectible', data: { now: at } });
  expect(await renewAgain()).toBe(true);
  expect((await subscriptionNow()).status).toBe('CANCELED');
});
