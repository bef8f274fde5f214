import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import type { Platform } from '../src/platform';
import { ledgerChargesByInvoice } from '../src/renewal-fixtures';

jest.setTimeout(240000);

/**
 * A coupon's `bonus_months` through the gateway on a test clock: free billing periods right
 * after the first paid period, their renewal invoices 0 and paid without a charge, then the
 * price again (services/billing/README.md, Bonus months).
 */
describe('bonus months', () => {
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

  it('makes the two periods after the first paid one free, paid without charging, then bills the price', async () => {
    const { send, subscribeOnClock, advance, invoicesOf } = await lifecycleOrganization(platform, receiver);
    const coupon = await send('POST', '/coupons', {
      name: 'Two months on us',
      discount_type: 'PERCENTAGE',
      discount_amount: 20,
      duration: 'once',
      bonus_months: 2,
    });
    expect(coupon.status).toBe(201);
    expect((await send('POST', '/promotion-codes', { coupon_id: coupon.body.id, code: 'BONUS2' })).status).toBe(201);

    const { clock, subscription } = await subscribeOnClock('bonus@example.com', '4242424242424242', {
      promotion_code: 'BONUS2',
    });
    expect(subscription.discount).toMatchObject({ bonus_months: 2, duration: 'once' });
    await advance(clock, '2026-05-15T00:00:00Z');

    const invoices = await invoicesOf(subscription.id);
    expect(
      invoices.map((i: any) => [i.period_start, i.subtotal, i.discount_amount, i.total, i.amount_paid, i.status]),
    ).toEqual([
      ['2026-01-31T10:00:00.000Z', 299, 59, 240, 240, 'paid'], // the checkout: 20% once
      ['2026-02-28T10:00:00.000Z', 299, 299, 0, 0, 'paid'], // bonus month 1
      ['2026-03-31T10:00:00.000Z', 299, 299, 0, 0, 'paid'], // bonus month 2
      ['2026-04-30T10:00:00.000Z', 299, 0, 299, 299, 'paid'],
    ]);
    const charges = await ledgerChargesByInvoice(
      platform.infrastructure.database,
      platform.checkout!.service.context.store.tables.schema,
      invoices.slice(1).map((i: any) => i.id),
    );
    expect(invoices.slice(1).map((i: any) => charges.get(i.id) ?? [])).toEqual([
      [],
      [],
      [{ key: `${invoices[3].id}:1`, status: 'succeeded' }],
    ]);
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      status: 'ACTIVE',
      current_period_start: '2026-04-30T10:00:00.000Z',
      current_period_end: '2026-05-31T10:00:00.000Z',
    });
  });
});
