import { callService, caller, eventually } from '@billing/testing';
import { createUser, signedIn } from '../src/dashboard-helpers';
import { FaultProxy } from '../src/fault-proxy';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(240000);

/**
 * Charges whose answer is lost between the services and checkout (docs/lost-answers.md): a
 * proxy in front of checkout holds the answer past billing's 5 s timeout or cuts the connection
 * once checkout has charged (or refunded). The outcome is never read as "not charged": the request answers 409
 * `payment_pending`, a retry is 409 too and charges nothing, and the reconciler records the
 * charge once it has asked the processor. Afterwards the processor's ledger and billing's
 * records agree: every succeeded charge is on exactly one paid invoice.
 */
describe('a charge whose answer is lost is recorded once, never charged again', () => {
  let platform: Platform;
  let proxy: FaultProxy;
  let org: CreatedOrganization;
  let sk: string;
  const products: Record<string, string> = {};
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const urls = { success_url: 'https://shop.example/ok', cancel_url: 'https://shop.example/no' };

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: {
        RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000',
        BILLING_SWITCH_HOLD_MS: '7000',
        BILLING_PENDING_CHARGE_MS: '1000',
        BILLING_TRIAL_SWEEP_INTERVAL_MS: '200',
      },
      checkoutVia: async (url) => {
        proxy = new FaultProxy(url);
        return proxy.start();
      },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    for (const [slug, price] of [
      ['pro', 299],
      ['business', 599],
      ['basic', 199],
    ] as const) {
      products[slug] = (await client.createProduct(org.id, plan({ slug, name: slug, price }))).body.id;
    }
    const portal = await client.admin('POST', `/organizations/${org.id}/portal_configurations`, {
      environment: 'SANDBOX',
      features: { subscription_update: { enabled: true, products: [products.pro, products.business] } },
    });
    expect(portal.status).toBe(201);
  });
  afterAll(async () => {
    await platform?.stop();
    await proxy?.stop();
  });

  /** Pays a `pro` (or `slug`) checkout on a test clock at 1 April; the subscription once billing has it. */
  async function subscribe(email: string, card = '4242424242424242', slug = 'pro') {
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-04-01T00:00:00Z' })).body.id as string;
    const session = await send('POST', '/checkout/sessions', {
      product_slug: slug,
      ...urls,
      customer_email: email,
      test_clock: clock,
    });
    await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: card, exp: '12/34', cvc: '123' }),
    });
    const subscription = await eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      return found.body;
    });
    return { clock, subscription };
  }

  async function advance(clock: string, to: string) {
    await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to });
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'));
  }

  /** What the admin API lists as pending (`GET /admin/v1/organizations/{id}/pending_charges`). */
  async function pendingCharges() {
    const listed = await clientOf(platform.gatewayUrl).admin(
      'GET',
      `/organizations/${org.id}/pending_charges?environment=SANDBOX`,
    );
    expect(listed.status).toBe(200);
    return listed.body.data as Array<Record<string, unknown>>;
  }

  /** The processor's succeeded charges by invoice (keys `<invoice>:<attempt>`). */
  async function succeededCharges(): Promise<Map<string, number>> {
    const store = platform.checkout!.service.context.store;
    const { rows } = await store.database.query<{ invoice: string; count: string }>(
      `SELECT split_part(idempotency_key, ':', 1) AS invoice, count(*) AS count
         FROM ${store.tables.schema}.sandbox_charges
        WHERE result->>'status' = 'succeeded' AND idempotency_key LIKE 'in\\_%:%' GROUP BY 1`,
    );
    return new Map(rows.map((row) => [row.invoice, Number(row.count)]));
  }

  /** Every succeeded charge is on exactly one paid invoice of the amount, and no invoice was charged twice. */
  async function expectLedgerAndRecordsAgree() {
    for (const [invoiceId, count] of await succeededCharges()) {
      expect({ invoiceId, count }).toEqual({ invoiceId, count: 1 });
      const invoice = await send('GET', `/invoices/${invoiceId}`);
      expect({ invoiceId, status: invoice.body.status }).toEqual({ invoiceId, status: 'paid' });
    }
  }

  /** The next charge's answer is lost, and so is the answer to the status query that follows it. */
  function loseChargeAndStatus() {
    proxy.arm({ path: /^\/internal\/charges$/, kind: 'drop' });
    proxy.arm({ path: /^\/internal\/charges\/status$/, kind: 'drop' });
  }

  it('a switch whose charge answer is held past the timeout is answered from the status query: 200, one charge', async () => {
    const { clock, subscription } = await subscribe('asked-switch@example.com');
    await advance(clock, '2026-04-10T12:00:00Z');
    proxy.arm({ path: /^\/internal\/charges$/, kind: 'hold', ms: 6000 });
    const switched = await send('POST', `/subscriptions/${subscription.id}/switch`, {
      target_product_id: products.business,
    });
    expect(switched.status).toBe(200);
    expect(switched.body).toMatchObject({ subscription: { price: 599 }, invoice: { total: 400, status: 'paid' } });
    await expectLedgerAndRecordsAgree();
  });

  it('a switch whose outcome stays unknown is 409, a retry charges nothing, the reconciler records the charge', async () => {
    const { clock, subscription } = await subscribe('held-switch@example.com');
    await advance(clock, '2026-04-10T12:00:00Z');
    await createUser(platform.gatewayUrl, org.id, 'owner@lost-answers.example', 'owner', 'a long enough password 1');
    const owner = await signedIn(platform.gatewayUrl, 'owner@lost-answers.example', 'a long enough password 1');
    // Every status query is lost until the dashboard has been read: the switch's hold is settled
    // only after that, however slowly a loaded machine gets there (the hold's 7 s passed first in
    // a CI run when only one query was lost).
    proxy.arm({ path: /^\/internal\/charges$/, kind: 'hold', ms: 6000 });
    proxy.arm({ path: /^\/internal\/charges\/status$/, kind: 'drop', untilDisarmed: true });
    const first = await send('POST', `/subscriptions/${subscription.id}/switch`, {
      target_product_id: products.business,
    });
    expect(first.status).toBe(409);
    expect(first.body.error.code).toBe('payment_pending');
    const retry = await send('POST', `/subscriptions/${subscription.id}/switch`, {
      target_product_id: products.business,
    });
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('payment_pending');
    expect(await pendingCharges()).toContainEqual(
      expect.objectContaining({ purpose: 'switch', subject: subscription.id, amount: 400 }),
    );
    const overview = (await owner.get(`/dashboard/${org.id}/sandbox`)).html;
    expect(overview).toContain('Charges being confirmed with the processor');
    expect(overview).toContain(subscription.id);
    proxy.disarm();

    const switched = await eventually(async () => {
      const read = await send('GET', `/subscriptions/${subscription.id}`);
      expect(read.body.price).toBe(599);
      return read.body;
    }, 30_000);
    expect(switched.current_period_start).toBe('2026-04-10T12:00:00.000Z');
    const invoices = await send('GET', `/invoices?subscription_id=${subscription.id}`);
    const proration = invoices.body.data.filter((i: any) => i.total === 400);
    expect(proration).toHaveLength(1);
    expect(proration[0].status).toBe('paid');
    expect(await pendingCharges()).not.toContainEqual(expect.objectContaining({ subject: subscription.id }));
    await expectLedgerAndRecordsAgree();
  });

  it("the portal's switch whose outcome stays unknown tells the buyer it is being confirmed; charged once", async () => {
    const { clock, subscription } = await subscribe('portal-switch@example.com');
    await advance(clock, '2026-04-10T12:00:00Z');
    const session = await send('POST', '/portal/sessions', {
      customer_id: subscription.customer_id,
      return_url: 'https://shop.example/account',
    });
    const confirm = `${session.body.url}/subscriptions/${subscription.id}/switch/${products.business}`;
    const preview = await (await fetch(confirm)).text();
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(preview)![1]!;
    loseChargeAndStatus();
    const posted = await fetch(confirm, {
      method: 'POST',
      body: new URLSearchParams({ csrf_token: csrf }),
      redirect: 'manual',
    });
    expect(posted.status).toBe(409);
    expect(await posted.text()).toMatch(/Your payment is being confirmed with the bank|您的付款正在向銀行確認中/);

    await eventually(async () => {
      expect((await send('GET', `/subscriptions/${subscription.id}`)).body.price).toBe(599);
    }, 30_000);
    await expectLedgerAndRecordsAgree();
  });

  it('a direct creation whose charge answer is lost is 409, a retry charges nothing, the subscription starts once', async () => {
    const { subscription } = await subscribe('direct@example.com');
    // Every status query is lost until the pending charge has been read: the reconciler asks
    // every 200 ms, and on a loaded machine it settled the charge before the list was read.
    proxy.arm({ path: /^\/internal\/charges$/, kind: 'drop' });
    proxy.arm({ path: /^\/internal\/charges\/status$/, kind: 'drop', untilDisarmed: true });
    const body = { customer_id: subscription.customer_id, product_id: products.basic, ...urls };
    const first = await send('POST', '/subscriptions', body);
    expect(first.status).toBe(409);
    expect(first.body.error.code).toBe('payment_pending');
    const retry = await send('POST', '/subscriptions', body);
    expect(retry.status).toBe(409);
    expect(await pendingCharges()).toContainEqual(
      expect.objectContaining({ purpose: 'first_period', subject: first.body.error.details[0].subscription_id }),
    );
    proxy.disarm();

    const started = await eventually(async () => {
      const list = await send('GET', `/subscriptions?customer_id=${subscription.customer_id}`);
      const basic = list.body.data.filter((s: any) => s.product.id === products.basic);
      expect(basic).toHaveLength(1);
      return basic[0];
    }, 30_000);
    expect(started.status).toBe('ACTIVE');
    const again = await send('POST', '/subscriptions', body);
    expect(again.status).toBe(409);
    await expectLedgerAndRecordsAgree();
  });

  it("a new card's retry whose answer is lost leaves the invoice open; the reconciler records it paid, once", async () => {
    const { clock, subscription } = await subscribe('new-card@example.com', '4000000000000341');
    await advance(clock, '2026-05-01T06:00:00Z');
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE');
    const [open] = (await send('GET', `/invoices?subscription_id=${subscription.id}&status=open`)).body.data;
    const card = (
      await callService(platform.checkout!.service.url, 'POST', '/internal/payment_methods', caller(org.id), {
        card_number: '4242424242424242',
        exp: '12/34',
        cvc: '123',
      })
    ).body;

    loseChargeAndStatus();
    const path = `/internal/customers/${subscription.customer_id}/default_payment_method`;
    const set = await callService(platform.billing!.service.url, 'PUT', path, caller(org.id), { payment_method: card });
    expect(set.status).toBe(200);
    expect(set.body.retried_invoices).toEqual([
      expect.objectContaining({ id: open.id, status: 'open', attempt_count: 1 }),
    ]);
    expect(await pendingCharges()).toContainEqual(expect.objectContaining({ purpose: 'invoice', subject: open.id }));

    await eventually(async () => {
      expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({ status: 'paid', attempt_count: 2 });
      expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    }, 30_000);
    expect((await succeededCharges()).get(open.id)).toBe(1);
    await expectLedgerAndRecordsAgree();
  });

  it("a hosted page's payment whose answer is lost between the gateway and checkout is charged once; paying again charges nothing", async () => {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      ...urls,
      customer_email: 'page@example.com',
    });
    proxy.arm({ path: new RegExp(`^/checkout/${session.body.id}$`), kind: 'drop' });
    const pay = () =>
      fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
      });
    expect((await pay()).status).toBeGreaterThanOrEqual(500);
    // The buyer pays again: the page says it is paid already (with the receipt), charging nothing.
    expect((await pay()).status).toBe(409);
    const paid = await send('GET', `/checkout/sessions/${session.body.id}`);
    expect(paid.body.status).toBe('COMPLETE');
    const store = platform.checkout!.service.context.store;
    const { rows } = await store.database.query<{ status: string }>(
      `SELECT result->>'status' AS status FROM ${store.tables.schema}.sandbox_charges WHERE idempotency_key LIKE $1`,
      [`${paid.body.payment_intent_id}-%`],
    );
    expect(rows).toEqual([{ status: 'succeeded' }]);
  });

  it('a refund whose answer is lost, asked again under its Idempotency-Key, gives back once', async () => {
    const { subscription } = await subscribe('refund@example.com');
    const [invoice] = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
    const refund = async () => {
      const response = await fetch(`${platform.gatewayUrl}/v1/refunds`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${sk}`,
          'content-type': 'application/json',
          'idempotency-key': `refund-${invoice.id}`,
        },
        body: JSON.stringify({ invoice_id: invoice.id, amount: 50 }),
      });
      return { status: response.status, body: (await response.json()) as any };
    };
    proxy.arm({ path: /^\/v1\/refunds$/, kind: 'drop' });
    const first = await refund();
    const again = first.status === 201 ? first : await refund();
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ amount: 50, status: 'succeeded' });
    const refunds = (await send('GET', `/refunds?invoice_id=${invoice.id}`)).body.data;
    expect(refunds).toHaveLength(1);
    const store = platform.checkout!.service.context.store;
    const { rows } = await store.database.query<{ amount: number }>(
      `SELECT amount FROM ${store.tables.schema}.sandbox_refunds WHERE idempotency_key = $1`,
      [refunds[0].id],
    );
    expect(rows).toEqual([{ amount: 50 }]);
    expect(proxy.lost).toContain('/v1/refunds');
  });

  it('a renewal whose charge answer is lost renews once, charged once', async () => {
    const { clock, subscription } = await subscribe('renewal@example.com');
    proxy.arm({ path: /^\/internal\/charges/, kind: 'drop' });
    proxy.arm({ path: /^\/internal\/charges\/status$/, kind: 'drop' });
    await advance(clock, '2026-05-01T06:00:00Z');
    const renewed = await eventually(async () => {
      const read = await send('GET', `/subscriptions/${subscription.id}`);
      expect(read.body.current_period_start).toBe('2026-05-01T00:00:00.000Z');
      return read.body;
    }, 30_000);
    expect(renewed.status).toBe('ACTIVE');
    expect(proxy.lost.some((path) => path.startsWith('/internal/charges'))).toBe(true);
    await expectLedgerAndRecordsAgree();
    // The renewal's payment names its trade however its answer came (here, asked again by its key).
    const renewal = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data.find(
      (invoice: { period_start: string }) => invoice.period_start === '2026-05-01T00:00:00.000Z',
    );
    const payments = await clientOf(platform.gatewayUrl).admin(
      'GET',
      `/organizations/${org.id}/customers/${subscription.customer_id}/payments?environment=SANDBOX`,
    );
    expect(payments.body.data).toContainEqual(
      expect.objectContaining({
        invoice_id: renewal.id,
        status: 'succeeded',
        processor: 'sandbox',
        processor_reference: expect.stringMatching(new RegExp(`^${renewal.id}:\\d+$`)),
      }),
    );
  });

  it("a canceled subscription's final invoice whose charge answer is lost is paid once, charged once", async () => {
    const metered = plan({
      slug: 'metered',
      name: 'metered',
      price: 299,
      metered_prices: [{ meter: 'calls', unit_amount: 2 }],
    });
    expect((await clientOf(platform.gatewayUrl).createProduct(org.id, metered)).status).toBe(201);
    expect((await send('POST', '/meters', { key: 'calls', name: 'Calls', aggregation: 'sum' })).status).toBe(201);
    const { clock, subscription } = await subscribe('final@example.com', '4242424242424242', 'metered');
    const usage = { id: 'final-1', customer_id: subscription.customer_id, meter: 'calls', quantity: 21 };
    expect((await send('POST', '/usage_events', usage)).status).toBe(202);
    expect((await send('POST', `/subscriptions/${subscription.id}/cancel`, {})).body.cancel_at_period_end).toBe(true);

    loseChargeAndStatus();
    await advance(clock, '2026-05-01T06:00:00Z');
    const final = await eventually(async () => {
      const invoices = (await send('GET', `/invoices?subscription_id=${subscription.id}`)).body.data;
      const found = invoices.find((i: { lines: Array<{ kind: string }> }) => i.lines.some((l) => l.kind === 'usage'));
      expect(found).toMatchObject({ status: 'paid', amount_paid: 42, attempt_count: 1 });
      return found;
    }, 30_000);
    expect(proxy.lost.some((path) => path.startsWith('/internal/charges'))).toBe(true);
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('CANCELED');
    expect((await succeededCharges()).get(final.id)).toBe(1);
    await expectLedgerAndRecordsAgree();
  });
});
