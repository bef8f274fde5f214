import { eventually } from '@billing/testing';
import {
  clientOf,
  type CreatedOrganization,
  eventsAppendedByRequests,
  type Platform,
  plan,
  startPlatform,
} from '../src/platform';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';

jest.setTimeout(240000);

type Reply = { status: number; body: any; headers: Headers };

/**
 * Refunds through the gateway (issue 13, part 7; docs/decisions/0009-refunds.md): of a checkout
 * order and of a renewal invoice, in full or in part, never more than was paid in all, not even
 * when asked at once; a full refund of an order voids its promotion redemption.
 */
describe('refunds through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let sk: string;
  let receiver: Receiver;
  let couponId: string;
  let codes = 0;

  const send = async (method: string, path: string, body?: unknown, key = sk, headers = {}): Promise<Reply> => {
    const response = await fetch(`${platform.gatewayUrl}/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  };
  const refund = (body: Record<string, unknown>, key = sk) => send('POST', '/refunds', body, key);
  const slow = <T>(check: () => Promise<T>) => eventually(check, 30000, 100);

  /** Pays `product_slug` on the hosted page; the session as the API shows it. */
  async function buy(fields: Record<string, unknown>, card = '4242424242424242') {
    const session = await send('POST', '/checkout/sessions', {
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      ...fields,
    });
    expect(session.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: card, exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return (await send('GET', `/checkout/sessions/${session.body.id}`)).body;
  }

  /** What the sandbox processor gave back for a charge, from its own ledger. */
  async function refundedAtProcessor(chargeKeyLike: string): Promise<{ count: number; total: number }> {
    const store = platform.checkout!.service.context.store;
    const { rows } = await store.database.query<{ count: string; total: string | null }>(
      `SELECT count(*)::text AS count, sum(amount)::text AS total FROM ${store.tables.schema}.sandbox_refunds
       WHERE charge_key LIKE $1`,
      [chargeKeyLike],
    );
    return { count: Number(rows[0]!.count), total: Number(rows[0]!.total ?? 0) };
  }

  const newCode = async () => {
    const created = await send('POST', '/promotion-codes', { coupon_id: couponId, code: `REFUND${++codes}` });
    expect(created.status).toBe(201);
    return created.body.data as { id: string; code: string };
  };
  const redemptionsOf = async (codeId: string) =>
    (await send('GET', `/promotion-codes/${codeId}/redemptions`)).body.data.redemptions as Array<{ status: string }>;

  /** A monthly plan bought on a test clock on 31 January, renewed on 28 February with `card`. */
  async function renewedOnClock(email: string, card = '4242424242424242') {
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-01-31T10:00:00Z' })).body;
    const session = await buy({ product_slug: 'pro', customer_email: email, test_clock: clock.id }, card);
    const subscriptionId = await slow(async () => {
      const read = (await send('GET', `/checkout/sessions/${session.id}`)).body;
      expect(read.subscription_id).toEqual(expect.any(String));
      expect((await send('GET', `/subscriptions/${read.subscription_id}`)).status).toBe(200);
      return read.subscription_id as string;
    });
    expect(
      (await send('POST', `/test_clocks/${clock.id}/advance`, { frozen_time: '2026-03-01T00:00:00Z' })).status,
    ).toBe(200);
    await slow(async () => expect((await send('GET', `/test_clocks/${clock.id}`)).body.status).toBe('ready'));
    const invoices = (await send('GET', `/invoices?subscription_id=${subscriptionId}`)).body.data;
    expect(invoices).toHaveLength(2);
    return { session, first: invoices[1], renewal: invoices[0] };
  }

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }));
    await client.createProduct(org.id, plan({ slug: 'ebook', type: 'ONE_TIME', interval: null, price: 1000 }));
    const coupon = await send('POST', '/coupons', {
      name: 'Ten',
      discount_type: 'PERCENTAGE',
      discount_amount: 10,
      duration: 'once',
    });
    couponId = coupon.body.id;
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['refund.created', 'refund.updated', 'order.refunded', 'invoice.refunded'],
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  it('refunds an order in parts that add up, refuses more than was paid, and voids the redemption only when all is back', async () => {
    const code = await newCode();
    const session = await buy({
      product_slug: 'ebook',
      customer_email: 'parts@example.com',
      promotion_code: code.code,
    });
    expect(session.amount_total).toBe(900);
    await slow(async () => expect((await redemptionsOf(code.id)).map((r) => r.status)).toEqual(['ACTIVE']));

    const first = await refund({ order_id: session.order_id, amount: 300, reason: 'requested_by_customer' });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      object: 'refund',
      id: expect.stringMatching(/^re_[0-9A-Za-z]{24}$/),
      amount: 300,
      currency: 'TWD',
      reason: 'requested_by_customer',
      status: 'succeeded',
      failure_reason: null,
      order_id: session.order_id,
      invoice_id: null,
      checkout_session_id: session.id,
      created_at: expect.any(String),
      livemode: false,
    });
    expect((await send('GET', `/refunds/${first.body.id}`)).body).toEqual(first.body);

    const tooMuch = await refund({ order_id: session.order_id, amount: 601 });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.error).toMatchObject({
      code: 'validation_error',
      details: [expect.objectContaining({ path: 'amount', code: 'amount_too_large' })],
    });
    // A partial refund leaves the order paid: the redemption stands.
    expect((await redemptionsOf(code.id)).map((r) => r.status)).toEqual(['ACTIVE']);

    const rest = await refund({ order_id: session.order_id });
    expect(rest.body).toMatchObject({ amount: 600, status: 'succeeded', reason: null });
    await slow(async () => expect((await redemptionsOf(code.id)).map((r) => r.status)).toEqual(['VOIDED']));

    const again = await refund({ order_id: session.order_id, amount: 1 });
    expect(again.status).toBe(422);
    expect(again.body.error.details).toEqual([expect.objectContaining({ path: 'order_id', code: 'already_refunded' })]);

    const listed = await send('GET', `/refunds?order_id=${session.order_id}`);
    expect(listed.body).toMatchObject({ object: 'list', has_more: false, livemode: false });
    expect(listed.body.data.map((r: any) => r.amount).sort()).toEqual([300, 600]);
    expect(await refundedAtProcessor(`${session.payment_intent_id}-%`)).toEqual({ count: 2, total: 900 });

    await slow(async () => {
      const types = receiver.events.filter(
        (e) => e.data.object.order_id === session.order_id || e.data.object.id === session.order_id,
      );
      expect(types.map((e) => e.type).sort()).toEqual([
        'order.refunded',
        'refund.created',
        'refund.created',
        'refund.updated',
        'refund.updated',
      ]);
    });
    const orderRefunded = receiver.events.find(
      (e) => e.type === 'order.refunded' && e.data.object.id === session.order_id,
    );
    expect(orderRefunded!.data.object).toMatchObject({ status: 'REFUNDED', amount_total: 900, amount_refunded: 900 });
  });

  it('refunds a renewal invoice in part and then in full, and the invoice says how much', async () => {
    const { renewal } = await renewedOnClock('renewal@example.com');
    expect(renewal).toMatchObject({ status: 'paid', amount_paid: 299, amount_refunded: 0, order_id: null });

    const part = await refund({ invoice_id: renewal.id, amount: 99 });
    expect(part.status).toBe(201);
    expect(part.body).toMatchObject({ amount: 99, status: 'succeeded', invoice_id: renewal.id, order_id: null });
    await slow(async () => expect((await send('GET', `/invoices/${renewal.id}`)).body.amount_refunded).toBe(99));

    const tooMuch = await refund({ invoice_id: renewal.id, amount: 201 });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.error.details[0]).toMatchObject({ path: 'amount', code: 'amount_too_large' });

    const rest = await refund({ invoice_id: renewal.id });
    expect(rest.body).toMatchObject({ amount: 200, status: 'succeeded' });
    await slow(async () =>
      expect((await send('GET', `/invoices/${renewal.id}`)).body).toMatchObject({
        status: 'paid',
        amount_paid: 299,
        amount_refunded: 299,
      }),
    );
    expect((await refund({ invoice_id: renewal.id })).body.error.details[0]).toMatchObject({
      path: 'invoice_id',
      code: 'already_refunded',
    });
    // The processor was asked to refund the charge the renewal made, keyed by invoice and attempt.
    expect(await refundedAtProcessor(`${renewal.id}:1`)).toEqual({ count: 2, total: 299 });
    await slow(async () => {
      const refunded = receiver.events.filter((e) => e.type === 'invoice.refunded' && e.data.object.id === renewal.id);
      expect(refunded.map((e) => e.data.object.amount_refunded).sort()).toEqual([299, 99]);
    });
  });

  it('treats the first invoice of a subscription and its checkout order as one payment', async () => {
    const { session, first } = await renewedOnClock('first@example.com');
    expect(first).toMatchObject({ order_id: session.order_id, amount_paid: 299 });
    const byInvoice = await refund({ invoice_id: first.id, amount: 100 });
    expect(byInvoice.body).toMatchObject({ amount: 100, order_id: session.order_id, invoice_id: first.id });
    expect((await refund({ order_id: session.order_id, amount: 200 })).status).toBe(422);
    const byOrder = await refund({ order_id: session.order_id });
    expect(byOrder.body).toMatchObject({ amount: 199, status: 'succeeded' });
    await slow(async () => expect((await send('GET', `/invoices/${first.id}`)).body.amount_refunded).toBe(299));
  });

  it('never refunds more than was paid when refunds are asked at once', async () => {
    const session = await buy({ product_slug: 'ebook', customer_email: 'rush@example.com' });
    const { renewal } = await renewedOnClock('rush-renewal@example.com');
    const rush = (body: Record<string, unknown>) => Promise.all(Array.from({ length: 8 }, () => refund(body)));

    const onOrder = await rush({ order_id: session.order_id, amount: 300 });
    const onInvoice = await rush({ invoice_id: renewal.id, amount: 100 });
    for (const [answers, paid, each] of [
      [onOrder, 1000, 300],
      [onInvoice, 299, 100],
    ] as const) {
      const succeeded = answers.filter((a) => a.status === 201);
      // Every refused one is a refusal in the envelope: over the amount (422) or, at worst, still colliding (409).
      for (const a of answers.filter((r) => r.status !== 201)) expect([409, 422]).toContain(a.status);
      expect(succeeded.length * each).toBeLessThanOrEqual(paid);
      expect(succeeded.length).toBe(Math.floor(paid / each));
    }
    expect((await refundedAtProcessor(`${renewal.id}:%`)).total).toBe(200);
    const orderRefunds = (await send('GET', `/refunds?order_id=${session.order_id}`)).body.data;
    expect(orderRefunds.reduce((sum: number, r: any) => sum + r.amount, 0)).toBe(900);
  });

  it('refuses bad input in the envelope and changes nothing', async () => {
    const session = await buy({ product_slug: 'ebook', customer_email: 'bad@example.com' });
    const other = await client.createOrganization('Other');
    await client.createProduct(other.id, plan({ slug: 'ebook', type: 'ONE_TIME', interval: null, price: 500 }));
    const theirs = await (async () => {
      const mine = sk;
      sk = other.api_keys.sandbox.secret_key;
      try {
        return await buy({ product_slug: 'ebook', customer_email: 'theirs@example.com' });
      } finally {
        sk = mine;
      }
    })();
    const store = platform.checkout!.service.context.store;
    const events = () => eventsAppendedByRequests(store);
    const before = await events();

    const cases: Array<[Record<string, unknown>, number, string, string?]> = [
      [{ order_id: session.order_id, amount: 0 }, 422, 'validation_error', 'amount'],
      [{ order_id: session.order_id, amount: -5 }, 422, 'validation_error', 'amount'],
      [{ order_id: session.order_id, amount: 1.5 }, 422, 'validation_error', 'amount'],
      [{ order_id: session.order_id, amount: 1001 }, 422, 'validation_error', 'amount'],
      [{}, 422, 'validation_error', 'order_id'],
      [{ order_id: session.order_id, invoice_id: 'in_x' }, 422, 'validation_error', 'invoice_id'],
      [{ order_id: session.order_id, reason: 'because' }, 422, 'validation_error', 'reason'],
      [{ order_id: session.order_id, note: 'x' }, 422, 'validation_error'],
      [{ order_id: 'ord_unknown' }, 404, 'not_found'],
      [{ invoice_id: 'in_unknown' }, 404, 'not_found'],
      [{ order_id: theirs.order_id }, 404, 'not_found'],
    ];
    for (const [body, status, code, path] of cases) {
      const answer = await refund(body);
      expect([JSON.stringify(body), answer.status, answer.body.error?.code]).toEqual([
        JSON.stringify(body),
        status,
        code,
      ]);
      if (path) expect(answer.body.error.details?.[0]?.path).toBe(path);
    }
    const publishable = await refund({ order_id: session.order_id }, org.api_keys.sandbox.publishable_key);
    expect([publishable.status, publishable.body.error.code]).toEqual([401, 'unauthorized']);
    expect((await send('GET', '/refunds/re_unknown')).status).toBe(404);
    expect((await send('GET', '/refunds?starting_after=re_unknown')).status).toBe(400);
    const malformed = await fetch(`${platform.gatewayUrl}/v1/refunds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
      body: '{"order_id":',
    });
    expect(malformed.status).toBe(400);

    expect(await events()).toBe(before);
    expect((await send('GET', `/refunds?order_id=${session.order_id}`)).body.data).toEqual([]);
    // The other organization's order is untouched, and its refunds are not ours to read.
    expect((await send('GET', `/refunds?order_id=${theirs.order_id}`)).body.data).toEqual([]);
  });

  it('answers a repeated request with the first refund, not a second one', async () => {
    const session = await buy({ product_slug: 'ebook', customer_email: 'again@example.com' });
    const headers = { 'idempotency-key': 'refund-once' };
    const first = await send('POST', '/refunds', { order_id: session.order_id, amount: 100 }, sk, headers);
    const second = await send('POST', '/refunds', { order_id: session.order_id, amount: 100 }, sk, headers);
    expect(second.headers.get('idempotency-replay')).toBe('true');
    expect(second.body).toEqual(first.body);
    expect((await send('GET', `/refunds?order_id=${session.order_id}`)).body.data).toHaveLength(1);
  });
});
