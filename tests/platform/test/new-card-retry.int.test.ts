import { callService, caller, eventually } from '@billing/testing';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import type { Platform } from '../src/platform';
import { ledgerChargesByInvoice } from '../src/renewal-fixtures';

jest.setTimeout(240000);

/**
 * A new card retries the open invoice at once (issue 13, for the customer portal): checkout's
 * `POST /internal/payment_methods` saves a sandbox card as the hosted page would, and billing's
 * `PUT /internal/customers/{id}/default_payment_method` makes it the customer's card and
 * charges the open invoice of a PAST_DUE subscription with it: ACTIVE again, one charge.
 */
describe('a new card retries the open invoice at once', () => {
  let platform: Platform;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startLifecyclePlatform();
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  const checkoutCall = (org: string, method: string, path: string, body?: unknown) =>
    callService(platform.checkout!.service.url, method, path, caller(org), body);
  const billingCall = (org: string, method: string, path: string, body?: unknown) =>
    callService(platform.billing!.service.url, method, path, caller(org), body);

  it('saves a card as the hosted page would, with its test-card behaviour and field rules', async () => {
    const { org } = await lifecycleOrganization(platform);
    const saved = await checkoutCall(org.id, 'POST', '/internal/payment_methods', {
      card_number: '4242 4242 4242 4242',
      exp: '12/34',
      cvc: '123',
    });
    expect(saved.status).toBe(201);
    expect(saved.body).toEqual({
      object: 'payment_method',
      id: expect.stringMatching(/^pm_sandbox_ok_4242_122034_[A-Za-z0-9]+$/),
      brand: 'visa',
      last4: '4242',
      exp_month: 12,
      exp_year: 2034,
    });
    const declines = await checkoutCall(org.id, 'POST', '/internal/payment_methods', {
      card_number: '4000000000000341',
      exp: '12/34',
      cvc: '123',
    });
    expect(declines.body.id).toMatch(/^pm_sandbox_declines_0341_/);
    const refused = await checkoutCall(org.id, 'POST', '/internal/payment_methods', {
      card_number: '4000000000009995',
      exp: '12/34',
      cvc: '123',
    });
    expect([refused.status, refused.body.error.details]).toEqual([
      402,
      [expect.objectContaining({ path: 'card_number', code: 'insufficient_funds' })],
    ]);
    const bad = await checkoutCall(org.id, 'POST', '/internal/payment_methods', { card_number: 'abc', exp: '13/34' });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['card_number', 'cvc', 'exp']);
    // Signed calls only.
    expect((await fetch(`${platform.checkout!.service.url}/internal/payment_methods`, { method: 'POST' })).status).toBe(
      401,
    );
  });

  it('takes a PAST_DUE subscription back to ACTIVE with one successful charge of the new card', async () => {
    const { org, send, subscribeOnClock, advance } = await lifecycleOrganization(platform, receiver);
    const { clock, subscription } = await subscribeOnClock('newcard@example.com', '4000000000000341');
    await advance(clock, '2026-03-01T00:00:00Z');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE');
    const [open] = (await send('GET', `/invoices?subscription_id=${subscription.id}&status=open`)).body.data;
    expect(open).toMatchObject({ attempt_count: 1, amount_due: 299 });

    const card = (
      await checkoutCall(org.id, 'POST', '/internal/payment_methods', {
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
      })
    ).body;
    const path = `/internal/customers/${subscription.customer_id}/default_payment_method`;
    const set = await billingCall(org.id, 'PUT', path, { payment_method: card });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      object: 'default_payment_method',
      customer_id: subscription.customer_id,
      payment_method: { id: card.id, brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2034 },
      retried_invoices: [
        { id: open.id, status: 'paid', attempt_count: 2, amount_paid: 299, paid_at: '2026-03-01T00:00:00.000Z' },
      ],
    });
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      status: 'ACTIVE',
      current_period_start: '2026-02-28T10:00:00.000Z',
      current_period_end: '2026-03-31T10:00:00.000Z',
    });
    const charges = await ledgerChargesByInvoice(
      platform.infrastructure.database,
      platform.checkout!.service.context.store.tables.schema,
      [open.id],
    );
    expect(charges.get(open.id)?.sort((a, b) => a.key.localeCompare(b.key))).toEqual([
      { key: `${open.id}:1`, status: 'declined' },
      { key: `${open.id}:2`, status: 'succeeded' },
    ]);
    await eventually(() => {
      const mine = receiver.events.filter((e) => e.data.object.id === open.id || e.data.object.id === subscription.id);
      expect(mine.filter((e) => e.type === 'invoice.paid')).toHaveLength(1);
      expect(mine.filter((e) => e.type === 'subscription.renewed')).toHaveLength(1);
    });

    // Again: nothing is PAST_DUE, nothing is charged; the bare sandbox reference is enough.
    const again = await billingCall(org.id, 'PUT', path, { payment_method: card.id });
    expect(again.body).toMatchObject({ payment_method: { id: card.id, last4: '4242' }, retried_invoices: [] });
    // Later renewals charge the new card.
    await advance(clock, '2026-04-01T00:00:00Z');
    const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
    expect(invoices[0]).toMatchObject({ period_start: '2026-03-31T10:00:00.000Z', status: 'paid', attempt_count: 1 });

    const unknown = await billingCall(org.id, 'PUT', '/internal/customers/cus_nobody/default_payment_method', {
      payment_method: card,
    });
    expect(unknown.status).toBe(404);
    const elsewhere = await billingCall('org_other', 'PUT', path, { payment_method: card });
    expect(elsewhere.status).toBe(404);
    const bad = await billingCall(org.id, 'PUT', path, { payment_method: 'pm_somewhere_else' });
    expect(bad.status).toBe(422);
  });
});
