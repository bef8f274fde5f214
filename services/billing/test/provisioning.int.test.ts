import { randomUUID } from 'node:crypto';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { projectCustomers } from '../src/customers/read-model';
import { projectSubscriptions } from '../src/subscriptions/read-model';
import { caller, client, eventsOf, feeds, newOrg, refundSucceeded } from './helpers';

jest.setTimeout(120000);

let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(billingService);
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid, publish } = feeds(() => running);

const customerByEmail = async (org: string, email: string) =>
  eventually(async () => {
    const res = await call('GET', `/v1/customers?email=${encodeURIComponent(email)}`, caller(org));
    expect(res.body.data).toHaveLength(1);
    return res.body.data[0];
  }, 20000);

const subscriptionsOf = async (org: string, customerId: string, count = 1) =>
  eventually(async () => {
    const res = await call('GET', `/v1/subscriptions?customer_id=${customerId}`, caller(org));
    expect(res.body.subscriptions).toHaveLength(count);
    return res.body.subscriptions;
  }, 20000);

describe('a paid SUBSCRIPTION checkout', () => {
  it('creates the customer, an ACTIVE subscription for the first period and a paid invoice', async () => {
    const org = newOrg();
    const productId = await product(org, { name: 'Monthly', slug: 'monthly', price: 499 });
    const { session, order } = await paid(org, {
      product_id: productId,
      customer_email: 'Ada@Example.com',
      customer_name: 'Ada Lovelace',
      external_customer_id: 'user_1',
      amount_subtotal: 499,
      amount_total: 449,
      discount_amount: 50,
    });

    const customer = await customerByEmail(org, 'ada@example.com');
    expect(customer).toEqual({
      object: 'customer',
      id: expect.stringMatching(/^cus_[0-9A-Za-z]{24}$/),
      email: 'Ada@Example.com',
      name: 'Ada Lovelace',
      external_id: 'user_1',
      email_verified: false,
      status: 'ACTIVE',
      metadata: null,
      test_clock: null,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      livemode: false,
      subscriptions_count: 1,
      orders_count: 1,
    });

    const [subscription] = await subscriptionsOf(org, customer.id);
    expect(subscription).toMatchObject({
      object: 'subscription',
      id: expect.stringMatching(/^sub_/),
      customer_id: customer.id,
      product: { id: productId, name: 'Monthly', slug: 'monthly' },
      status: 'ACTIVE',
      price: 499,
      interval: 'month',
      interval_count: 1,
      trial_end: null,
      cancel_at_period_end: false,
      checkout_session_id: session,
      livemode: false,
    });
    const start = new Date(subscription.current_period_start);
    const end = new Date(subscription.current_period_end);
    const expected = new Date(start);
    expected.setUTCMonth(start.getUTCMonth() + 1);
    if (expected.getUTCDate() === start.getUTCDate()) expect(end.toISOString()).toBe(expected.toISOString());
    else expect(end.getUTCMonth()).toBe((start.getUTCMonth() + 1) % 12); // clamped to the month end

    const single = await call('GET', `/v1/customers/${customer.id}`, caller(org));
    expect(single.status).toBe(200);
    expect(single.body.subscriptions).toEqual([
      {
        id: subscription.id,
        status: 'ACTIVE',
        current_period_start: subscription.current_period_start,
        current_period_end: subscription.current_period_end,
        product: { id: productId, name: 'Monthly', slug: 'monthly' },
      },
    ]);

    const [invoice] = await eventsOf(running, 'InvoicePaid', org);
    expect(invoice!.data.object).toMatchObject({
      object: 'invoice',
      id: expect.stringMatching(/^in_/),
      customer_id: customer.id,
      subscription_id: subscription.id,
      order_id: order,
      checkout_session_id: session,
      number: expect.stringMatching(/^INV-\d{6}$/),
      status: 'paid',
      subtotal: 499,
      discount_amount: 50,
      total: 449,
      amount_paid: 449,
      amount_due: 0,
      lines: [
        {
          description: 'Monthly (every month)',
          amount: 499,
          period: { start: subscription.current_period_start, end: subscription.current_period_end },
          kind: 'subscription',
        },
      ],
      attempt_count: 1,
      period_start: subscription.current_period_start,
      period_end: subscription.current_period_end,
    });
    const listed = await call('GET', `/v1/invoices?subscription_id=${subscription.id}`, caller(org));
    expect(listed.body).toMatchObject({ object: 'list', has_more: false, data: [invoice!.data.object] });
    expect((await call('GET', `/v1/invoices/${invoice!.data.object.id}`, caller(org))).body).toEqual(
      invoice!.data.object,
    );
    expect((await call('GET', `/v1/invoices/${invoice!.data.object.id}`, caller(newOrg()))).status).toBe(404);
    const [activated] = await eventsOf(running, 'SubscriptionActivated', org);
    expect(activated!.data).toMatchObject({ checkout_session_id: session, object: subscription });
    const [created] = await eventsOf(running, 'CustomerCreated', org);
    expect(created!.data.object).toEqual({
      ...Object.fromEntries(Object.entries(customer).filter(([k]) => !k.endsWith('_count'))),
      // Linking happens in the creation itself: the object is already the final one.
    });
  });

  it('projects the same read models when its events are applied again', async () => {
    const org = newOrg();
    const plan = await product(org);
    await paid(org, { product_id: plan, customer_email: 'replay@example.com', external_customer_id: 'replay_1' });
    const customer = await customerByEmail(org, 'replay@example.com');
    const [subscription] = await subscriptionsOf(org, customer.id);
    const { store } = running.service.context;
    const db = running.infrastructure.database;
    const schema = store.tables.schema;
    const customerEvents = await store.readStream(`customer-${customer.id}`);
    const subscriptionEvents = await store.readStream(`subscription-${subscription.id}`);
    expect(customerEvents.map((e) => e.type)).toEqual(['CustomerCreated', 'CustomerOrderRecorded']);
    await projectCustomers(db, schema, customerEvents);
    await projectSubscriptions(db, schema, subscriptionEvents);
    expect(await customerByEmail(org, 'replay@example.com')).toEqual(customer);
    expect((await call('GET', `/v1/subscriptions/${subscription.id}`, caller(org))).body).toEqual(subscription);
  });

  it('starts in TRIAL with trial_end when the product has trial days', async () => {
    const org = newOrg();
    const productId = await product(org, { trial_days: 7, interval: 'year' });
    await paid(org, { product_id: productId, customer_email: 'trial@example.com' });
    const customer = await customerByEmail(org, 'trial@example.com');
    const [subscription] = await subscriptionsOf(org, customer.id);
    expect(subscription.status).toBe('TRIAL');
    const start = Date.parse(subscription.current_period_start);
    expect(Date.parse(subscription.trial_end)).toBe(start + 7 * 24 * 3600 * 1000);
    expect(new Date(subscription.current_period_end).getUTCFullYear()).toBe(new Date(start).getUTCFullYear() + 1);
  });

  it('starts the plan as the session sold it', async () => {
    const org = newOrg();
    const sold = {
      id: 'prod_sold_only',
      name: 'Weekly',
      slug: 'weekly',
      type: 'SUBSCRIPTION',
      price: 99,
      interval: 'week',
      interval_count: 2,
      trial_days: null,
    };
    await paid(org, { product_id: sold.id, product: sold, customer_email: 'sold@example.com' });
    const customer = await customerByEmail(org, 'sold@example.com');
    const [subscription] = await subscriptionsOf(org, customer.id);
    expect(subscription).toMatchObject({ status: 'ACTIVE', product: { id: sold.id, name: 'Weekly', slug: 'weekly' } });
    const start = Date.parse(subscription.current_period_start);
    expect(Date.parse(subscription.current_period_end)).toBe(start + 14 * 24 * 3600 * 1000);
  });

  it('reuses the customer by email, never changes its name, and counts every order', async () => {
    const org = newOrg();
    const plan = await product(org);
    const oneTime = await product(org, { type: 'ONE_TIME', interval: null, name: 'Sticker' });
    await paid(org, { product_id: plan, customer_email: 'bob@example.com', customer_name: 'Bob' });
    const first = await customerByEmail(org, 'bob@example.com');
    await paid(org, {
      product_id: oneTime,
      mode: 'PAYMENT',
      customer_email: 'BOB@example.com',
      customer_name: 'Robert',
      external_customer_id: 'bob_7',
    });
    const again = await eventually(async () => {
      const c = await customerByEmail(org, 'bob@example.com');
      expect(c.orders_count).toBe(2);
      return c;
    }, 20000);
    expect(again).toMatchObject({ id: first.id, name: 'Bob', external_id: 'bob_7', subscriptions_count: 1 });
    const updates = await eventsOf(running, 'CustomerUpdated', org);
    expect(updates.map((e) => e.data.changes)).toEqual([{ external_id: 'bob_7' }]);
    expect(updates[0]!.data.object).toMatchObject({ id: first.id, name: 'Bob', external_id: 'bob_7' });
  });

  it('grants the credits a CREDITS product was sold with, once per order, expiring as it said', async () => {
    const org = newOrg();
    const pack = await product(org, {
      type: 'CREDITS',
      interval: null,
      name: '500 credits',
      credits: { amount: 500, expires_after_days: 30 },
    });
    const bare = await product(org, { type: 'CREDITS', interval: null, name: 'No credits declared' });
    const { order, event } = await paid(org, { product_id: pack, mode: 'PAYMENT', customer_email: 'cc@example.com' });
    // A producer's retry under a new event id, then a later order on the same key (consumed after it).
    await publish('checkout.events', { ...event, id: randomUUID() });
    await publish('checkout.events', {
      ...event,
      id: randomUUID(),
      stream_version: 2,
      data: { ...event.data, order_id: 'ord_bare', product_id: bare, product: undefined },
    });
    await eventually(async () => expect(await eventsOf(running, 'CustomerOrderRecorded', org)).toHaveLength(2), 20000);
    const customer = await customerByEmail(org, 'cc@example.com');
    const credits = (await call('GET', `/v1/customers/${customer.id}/credits`, caller(org))).body;
    expect(credits).toMatchObject({ object: 'credit_balance', customer_id: customer.id, balance: 500 });
    expect(credits.grants).toEqual([
      expect.objectContaining({ amount: 500, remaining: 500, source: 'purchase', source_id: order }),
    ]);
    const [grant] = credits.grants;
    expect(Date.parse(grant.expires_at) - Date.parse(grant.created_at)).toBe(30 * 24 * 60 * 60_000);
    expect(await eventsOf(running, 'CreditsGranted', org)).toHaveLength(1);
  });

  it("takes back a refunded CREDITS order's share of its credits from its own grant, as far as it has them left", async () => {
    const org = newOrg();
    const pack = await product(org, {
      type: 'CREDITS',
      interval: null,
      credits: { amount: 500, expires_after_days: null },
    });
    const { order } = await paid(org, {
      product_id: pack,
      mode: 'PAYMENT',
      customer_email: 'refund@example.com',
      amount_subtotal: 300,
      amount_total: 300,
    });
    const customer = await customerByEmail(org, 'refund@example.com');
    const credits = () => call('GET', `/v1/customers/${customer.id}/credits`, caller(org));
    await eventually(async () => expect((await credits()).body.balance).toBe(500), 20000);
    // Credits of another grant are the customer's whatever happens to the order.
    const gift = await call('POST', `/v1/customers/${customer.id}/credits/grants`, caller(org), {
      amount: 50,
      reason: 'goodwill',
    });
    expect(gift.status).toBe(201);
    const spent = await call('POST', `/v1/customers/${customer.id}/credits/spend`, caller(org), {
      amount: 300,
      idempotency_key: 'used',
    });
    // Drawn from the order's grant, the older of two that never expire.
    expect(spent.body.balance).toBe(250);

    // 100 of 300 TWD back: 167 credits (rounded up) are taken back.
    const first = refundSucceeded(org, order, 100);
    await publish('checkout.events', first);
    await eventually(async () => expect((await credits()).body.balance).toBe(83), 20000);
    // The same refund again, under another event id, takes nothing more.
    await publish('checkout.events', { ...first, id: randomUUID() });
    // The rest back: the other 333 are owed, but the order's grant has only 33 left; the gift stays.
    await publish('checkout.events', refundSucceeded(org, order, 200));
    await eventually(async () => expect((await credits()).body.balance).toBe(50), 20000);
    const adjustments = await eventsOf(running, 'CreditsAdjusted', org);
    expect(adjustments.map((e) => e.data.amount)).toEqual([167, 33]);
    expect((await credits()).body.grants).toEqual([expect.objectContaining({ amount: 50, remaining: 50 })]);
  });

  it('does not take an external id that another customer holds', async () => {
    const org = newOrg();
    const oneTime = await product(org, { type: 'ONE_TIME', interval: null });
    await paid(org, { product_id: oneTime, mode: 'PAYMENT', customer_email: 'a@x.io', external_customer_id: 'shared' });
    await customerByEmail(org, 'a@x.io');
    await paid(org, { product_id: oneTime, mode: 'PAYMENT', customer_email: 'b@x.io', external_customer_id: 'shared' });
    const b = await customerByEmail(org, 'b@x.io');
    expect(b.external_id).toBeNull();
    expect(b.subscriptions_count).toBe(0);
  });

  it('changes nothing when the same event is delivered twice', async () => {
    const org = newOrg();
    const plan = await product(org);
    const oneTime = await product(org, { type: 'ONE_TIME', interval: null });
    const { event } = await paid(org, { product_id: plan, customer_email: 'twice@example.com' });
    const customer = await customerByEmail(org, 'twice@example.com');
    await subscriptionsOf(org, customer.id);
    await publish('checkout.events', event);
    // A later event on the same key (same partition, so consumed after the redelivery).
    await publish('checkout.events', {
      ...event,
      id: randomUUID(),
      stream_version: 2,
      data: { ...event.data, order_id: 'ord_later', product_id: oneTime, mode: 'PAYMENT' },
    });
    await eventually(async () => expect(await eventsOf(running, 'CustomerOrderRecorded', org)).toHaveLength(2), 20000);
    expect((await customerByEmail(org, 'twice@example.com')).orders_count).toBe(2);
    await subscriptionsOf(org, customer.id, 1);
    expect(await eventsOf(running, 'InvoicePaid', org)).toHaveLength(1);
    expect(await eventsOf(running, 'CustomerCreated', org)).toHaveLength(1);
  });
});

describe('a second paid checkout for a product the customer already subscribes to', () => {
  it('creates no second subscription and records DuplicateSubscriptionPaid for the refund', async () => {
    const org = newOrg();
    const plan = await product(org);
    await paid(org, { product_id: plan, customer_email: 'dup@example.com' });
    const customer = await customerByEmail(org, 'dup@example.com');
    const [existing] = await subscriptionsOf(org, customer.id);

    const live = await call('POST', '/internal/customers/resolve', caller(org), {
      email: 'DUP@example.com',
      product_id: plan,
    });
    expect(live.body.live_subscription).toEqual({ id: existing.id, status: 'ACTIVE' });

    const { session, order } = await paid(org, {
      product_id: plan,
      customer_email: 'dup@example.com',
      amount_total: 299,
    });
    const duplicates = await eventually(async () => {
      const rows = await eventsOf(running, 'DuplicateSubscriptionPaid', org);
      expect(rows).toHaveLength(1);
      return rows;
    }, 20000);
    expect(duplicates[0]!.stream_id).toBe(`subscription-${existing.id}`);
    expect(duplicates[0]!.data).toEqual({
      checkout_session_id: session,
      order_id: order,
      customer_id: customer.id,
      product_id: plan,
      amount_total: 299,
      existing_subscription_id: existing.id,
      status: 'ACTIVE',
      detected_at: expect.any(String),
    });
    await subscriptionsOf(org, customer.id, 1);
    expect((await customerByEmail(org, 'dup@example.com')).orders_count).toBe(2);
    expect(await eventsOf(running, 'InvoicePaid', org)).toHaveLength(1);
  });

  it('keeps one customer and one subscription when two payments for a new buyer arrive at once', async () => {
    const org = newOrg();
    const plan = await product(org);
    await Promise.all([
      paid(org, { product_id: plan, customer_email: 'race@example.com' }),
      paid(org, { product_id: plan, customer_email: 'race@example.com' }),
      paid(org, { product_id: plan, customer_email: 'Race@example.com' }),
    ]);
    await eventually(async () => {
      expect(await eventsOf(running, 'DuplicateSubscriptionPaid', org)).toHaveLength(2);
    }, 30000);
    const customer = await customerByEmail(org, 'race@example.com');
    expect(customer.orders_count).toBe(3);
    await subscriptionsOf(org, customer.id, 1);
    expect(await eventsOf(running, 'CustomerCreated', org)).toHaveLength(1);
    expect(await eventsOf(running, 'InvoicePaid', org)).toHaveLength(1);
  });

  it('resolves nobody on the internal check for another product, email or organization', async () => {
    const org = newOrg();
    const plan = await product(org);
    await paid(org, { product_id: plan, customer_email: 'one@example.com' });
    const one = await customerByEmail(org, 'one@example.com');
    const resolve = (who: string, body: Record<string, unknown>) =>
      call('POST', '/internal/customers/resolve', caller(who), body);
    expect((await resolve(org, { email: 'one@example.com', product_id: 'prod_other' })).body).toEqual({
      customer: { id: one.id, email: 'one@example.com', external_id: null },
      live_subscription: null,
    });
    const nobody = { status: 200, body: { customer: null, live_subscription: null } };
    expect(await resolve(org, { email: 'two@example.com', product_id: plan })).toEqual(nobody);
    expect(await resolve(newOrg(), { email: 'one@example.com', product_id: plan })).toEqual(nobody);
    expect(await resolve(org, {})).toEqual(nobody);
    expect((await resolve(org, { email: 'one@example.com', create: 'yes' })).status).toBe(422);
    expect((await call('POST', '/internal/customers/resolve', {}, { email: 'a' })).status).toBe(401);
  });
});

describe('invoice numbers of paid checkouts', () => {
  it('are gapless and unique per organization when many buyers of two organizations pay at once', async () => {
    const orgs = [newOrg(), newOrg()];
    const plans = await Promise.all(orgs.map((org) => product(org)));
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        paid(orgs[i % 2]!, { product_id: plans[i % 2], customer_email: `buyer-${i}@example.com` }),
      ),
    );
    for (const org of orgs) {
      const numbers = await eventually(async () => {
        const res = await call('GET', '/v1/invoices?limit=100', caller(org));
        expect(res.body.data).toHaveLength(20);
        return res.body.data.map((invoice: { number: string }) => invoice.number).sort();
      }, 30000);
      expect(numbers).toEqual(Array.from({ length: 20 }, (_, i) => `INV-${String(i + 1).padStart(6, '0')}`));
    }
  });
});

describe('resolving the buyer for checkout (POST /internal/customers/resolve)', () => {
  const resolve = (org: string, body: Record<string, unknown>) =>
    call('POST', '/internal/customers/resolve', caller(org), body);

  it('creates a new buyer once, with the name and external id, and finds them by any name after', async () => {
    const org = newOrg();
    const created = await resolve(org, { email: 'Mei@Example.com', name: 'Mei', external_id: 'u_1', create: true });
    expect(created.body.customer).toEqual({
      id: expect.stringMatching(/^cus_/),
      email: 'Mei@Example.com',
      external_id: 'u_1',
    });
    const id = created.body.customer.id;
    for (const names of [{ email: 'mei@example.com' }, { external_id: 'u_1' }, { customer_id: id }]) {
      expect((await resolve(org, { ...names, create: true })).body.customer.id).toBe(id);
    }
    expect(await eventsOf(running, 'CustomerCreated', org)).toHaveLength(1);
  });

  it('follows the precedence customer_id, external_id, email, and never changes a found customer', async () => {
    const org = newOrg();
    const a = (await resolve(org, { email: 'a@example.com', external_id: 'ext_a', create: true })).body.customer;
    const b = (await resolve(org, { email: 'b@example.com', create: true })).body.customer;
    expect((await resolve(org, { customer_id: a.id, email: 'b@example.com' })).body.customer.id).toBe(a.id);
    expect((await resolve(org, { external_id: 'ext_a', email: 'b@example.com' })).body.customer.id).toBe(a.id);
    const byEmail = await resolve(org, { external_id: 'ext_new', email: 'b@example.com', name: 'B', create: true });
    expect(byEmail.body.customer).toEqual({ id: b.id, email: 'b@example.com', external_id: null });
  });

  it('makes one customer of concurrent first payments by one email', async () => {
    const org = newOrg();
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        resolve(org, { email: i % 2 ? 'RACE@example.com' : 'race@example.com', create: true }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(200));
    expect(new Set(answers.map((a) => a.body.customer.id)).size).toBe(1);
    expect(await eventsOf(running, 'CustomerCreated', org)).toHaveLength(1);
  });

  it('provisions the customer and the subscription that checkout named in checkout.completed', async () => {
    const org = newOrg();
    const plan = await product(org);
    const buyer = (await resolve(org, { email: 'named@example.com', create: true })).body.customer;
    const subscriptionId = `sub_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
    await paid(org, {
      product_id: plan,
      customer_id: buyer.id,
      customer_email: 'typed-differently@example.com',
      subscription_id: subscriptionId,
    });
    const [subscription] = await subscriptionsOf(org, buyer.id);
    expect(subscription.id).toBe(subscriptionId);
    expect(await eventsOf(running, 'CustomerCreated', org)).toHaveLength(1);
  });
});

describe('entitlements', () => {
  it('lists live subscriptions and the most recent one, by email, external id or customer id', async () => {
    const org = newOrg();
    const basic = await product(org, { name: 'Basic', slug: 'basic' });
    const pro = await product(org, { name: 'Pro', slug: 'pro', trial_days: 3 });
    await paid(org, { product_id: basic, customer_email: 'e@example.com', external_customer_id: 'ext_e' });
    const customer = await customerByEmail(org, 'e@example.com');
    await subscriptionsOf(org, customer.id, 1);
    await paid(org, { product_id: pro, customer_email: 'e@example.com' });
    const [latest] = await subscriptionsOf(org, customer.id, 2);

    for (const query of ['email=E@example.com', 'external_id=ext_e', `customer_id=${customer.id}`]) {
      const res = await call('GET', `/v1/customers/entitlements?${query}`, caller(org));
      expect(res.status).toBe(200);
      expect(res.body.entitlements).toEqual([
        {
          product: 'pro',
          product_id: pro,
          status: 'trialing',
          subscription_id: latest.id,
          current_period_end: latest.current_period_end,
        },
        expect.objectContaining({ product: 'basic', product_id: basic, status: 'active' }),
      ]);
      expect(res.body.subscription).toEqual({
        id: latest.id,
        status: 'TRIAL',
        product: { id: pro, name: 'Pro', slug: 'pro' },
        current_period_end: latest.current_period_end,
      });
    }
  });

  it('answers 400 invalid_request for no identifier or two naming different customers, empty for nobody', async () => {
    const org = newOrg();
    const pro = await product(org, { name: 'Pro', slug: 'pro' });
    await paid(org, { product_id: pro, customer_email: 'a@example.com', external_customer_id: 'ext_a' });
    await paid(org, { product_id: pro, customer_email: 'b@example.com' });
    const a = await customerByEmail(org, 'a@example.com');
    await customerByEmail(org, 'b@example.com');
    await subscriptionsOf(org, a.id);
    const entitlements = (query: string, org_ = org, environment?: 'PRODUCTION') =>
      call('GET', `/v1/customers/entitlements${query}`, caller(org_, environment));

    for (const query of ['', `?customer_id=${a.id}&email=b@example.com`, '?external_id=ext_a&email=B@example.com']) {
      const res = await entitlements(query);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    const empty = { status: 200, body: { entitlements: [], customer: null, subscription: null, credits: null } };
    expect(await entitlements('?email=nobody@example.com')).toEqual(empty);
    expect(await entitlements('?customer_id=cus_missing&external_id=nobody')).toEqual(empty);
    // Another organization's or environment's customer is as if absent.
    expect(await entitlements(`?customer_id=${a.id}`, newOrg())).toEqual(empty);
    expect(await entitlements('?email=a@example.com', org, 'PRODUCTION')).toEqual(empty);

    for (const query of [
      `?customer_id=${a.id}&email=A@example.com`,
      '?external_id=unknown&email=a@example.com',
      `?customer_id=cus_missing&external_id=ext_a&email=nobody@example.com`,
    ]) {
      const res = await entitlements(query);
      expect(res.status).toBe(200);
      expect(res.body.entitlements).toEqual([expect.objectContaining({ product_id: pro, status: 'active' })]);
    }
  });

  it('gives an empty list and null for a customer without live subscriptions', async () => {
    const org = newOrg();
    const oneTime = await product(org, { type: 'ONE_TIME', interval: null });
    await paid(org, { product_id: oneTime, mode: 'PAYMENT', customer_email: 'none@example.com' });
    await customerByEmail(org, 'none@example.com');
    const res = await call('GET', '/v1/customers/entitlements?email=none@example.com', caller(org));
    expect(res).toEqual({
      status: 200,
      body: {
        entitlements: [],
        customer: expect.objectContaining({ email: 'none@example.com' }),
        subscription: null,
        credits: { balance: 0 },
      },
    });
  });
});
