import { eventually } from '@billing/testing';
import { DashboardAgent } from '../src/dashboard-helpers';
import {
  ADMIN_TOKEN,
  clientOf,
  type CreatedOrganization,
  jsonApi,
  type Platform,
  plan,
  startPlatform,
} from '../src/platform';

jest.setTimeout(120000);

/** The dashboard's reads the public API lacks (docs/dashboard-api.md, item 4), through the gateway. */
describe('dashboard reads', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let other: CreatedOrganization;
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => org.api_keys.sandbox.secret_key,
  );
  const admin = (organization: string, path: string) => client.admin('GET', `/organizations/${organization}${path}`);

  const buy = async (email: string, card: string, testClock: string) => {
    const created = await send('POST', '/checkout/sessions', {
      product_slug: 'monthly',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      test_clock: testClock,
    });
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${created.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ email, name: email.split('@')[0]!, card_number: card, exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return eventually(async () => {
      const session = await send('GET', `/checkout/sessions/${created.body.id}`);
      const subscription = await send('GET', `/subscriptions/${session.body.subscription_id}`);
      expect(subscription.status).toBe(200);
      return subscription.body;
    });
  };

  let declining: { id: string; customer_id: string };
  let paying: { id: string; customer_id: string };

  beforeAll(async () => {
    platform = await startPlatform({ checkout: true, billing: true });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme');
    other = await client.createOrganization('Other');
    await client.createProduct(org.id, plan({ slug: 'monthly', price: 300 }));
    await client.createProduct(
      org.id,
      plan({ slug: 'mug', name: 'Tea mug', type: 'ONE_TIME', interval: null, interval_count: 1, price: 480 }),
    );
    const clock = (await send('POST', '/test_clocks', { frozen_time: '2026-05-01T00:00:00Z' })).body.id as string;
    paying = await buy('alice.wong@example.com', '4242424242424242', clock);
    declining = await buy('bob.chen@example.com', '4000000000000341', clock);
    await send('PATCH', `/customers/${paying.customer_id}`, { external_id: 'shop-user-42' });
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-06-01T01:00:00Z' })).status).toBe(
      200,
    );
    await eventually(async () => {
      const invoices = await send('GET', `/invoices?subscription_id=${declining.id}`);
      expect(invoices.body.data.map((invoice: { status: string }) => invoice.status)).toContain('open');
      expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready');
    });
  });
  afterAll(() => platform.stop());

  it('searches customers by email, external id or any part of them', async () => {
    const ids = async (query: string) =>
      (await admin(org.id, `/customers?environment=SANDBOX&${query}`)).body.data.map((c: { id: string }) => c.id);
    expect(await ids('query=WONG')).toEqual([paying.customer_id]);
    expect(await ids('query=chen')).toEqual([declining.customer_id]);
    // Both were made at the clock's same instant: newest first, then by id.
    const both = [declining.customer_id, paying.customer_id].sort().reverse();
    expect(await ids('query=example.com')).toEqual(both);
    expect(await ids('query=user-4')).toEqual([paying.customer_id]);
    expect(await ids(`query=${paying.customer_id.slice(4, 14)}`)).toEqual([paying.customer_id]);
    expect(await ids('email=BOB.CHEN@example.com')).toEqual([declining.customer_id]);
    expect(await ids('external_id=shop-user-42')).toEqual([paying.customer_id]);
    expect(await ids('external_id=shop-user-4')).toEqual([]);
    expect(await ids('query=nobody')).toEqual([]);
    const page = await admin(org.id, '/customers?environment=SANDBOX&limit=1');
    expect(page.body).toMatchObject({ object: 'list', has_more: true, data: [{ object: 'customer' }] });
    const next = await admin(org.id, `/customers?environment=SANDBOX&starting_after=${page.body.data[0].id}`);
    expect(page.body.data[0].id).toBe(both[0]);
    expect(next.body).toMatchObject({ has_more: false, data: [{ id: both[1] }] });
    expect((await admin(other.id, '/customers?environment=SANDBOX&query=example')).body.data).toEqual([]);
    expect((await admin(org.id, '/customers?environment=PRODUCTION')).body.data).toEqual([]);
  });

  it("shows a customer's payments and failed charges, newest first", async () => {
    const payments = await admin(org.id, `/customers/${declining.customer_id}/payments?environment=SANDBOX`);
    expect(payments.status).toBe(200);
    expect(payments.body.data).toEqual([
      expect.objectContaining({
        object: 'payment',
        status: 'failed',
        amount: 300,
        subscription_id: declining.id,
        failure_message: expect.any(String),
      }),
      expect.objectContaining({
        status: 'succeeded',
        amount: 300,
        subscription_id: declining.id,
        failure_message: null,
      }),
    ]);
    const first = await admin(org.id, `/customers/${declining.customer_id}/payments?environment=SANDBOX&limit=1`);
    expect(first.body).toMatchObject({ has_more: true, data: [{ status: 'failed' }] });
    const rest = await admin(
      org.id,
      `/customers/${declining.customer_id}/payments?environment=SANDBOX&starting_after=${first.body.data[0].id}`,
    );
    expect(rest.body).toMatchObject({ has_more: false, data: [{ status: 'succeeded' }] });
    const paid = await admin(org.id, `/customers/${paying.customer_id}/payments?environment=SANDBOX`);
    expect(paid.body.data.map((p: { status: string }) => p.status)).toEqual(['succeeded', 'succeeded']);
    // Each paid charge names its trade: the renewal's is the attempt's key (`<invoice>:<attempt>`) at
    // the simulator, the first period's the checkout's charge key; a decline has none.
    const [renewal, firstPeriod] = paid.body.data as {
      invoice_id: string;
      processor: string;
      processor_reference: string;
    }[];
    expect(renewal).toMatchObject({ processor: 'sandbox', processor_reference: `${renewal!.invoice_id}:1` });
    expect(firstPeriod).toMatchObject({
      processor: 'sandbox',
      processor_reference: expect.stringMatching(/^pi_\w+-1$/),
    });
    expect(payments.body.data[0]).toMatchObject({ status: 'failed', processor: null, processor_reference: null });
  });

  it("lists a customer's one-time purchases, and the dashboard shows them among the customer's payments", async () => {
    const orders: string[] = [];
    for (const email of ['alice.wong@example.com', 'ALICE.WONG@example.com']) {
      const created = await send('POST', '/checkout/sessions', {
        product_slug: 'mug',
        customer_email: email,
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
      });
      const paid = await fetch(`${platform.gatewayUrl}/checkout/${created.body.id}`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
      });
      expect(paid.status).toBe(303);
      orders.unshift((await send('GET', `/checkout/sessions/${created.body.id}`)).body.order_id);
    }
    const path = `/customers/${paying.customer_id}/orders?environment=SANDBOX`;
    const listed = await eventually(async () => {
      const found = await admin(org.id, path);
      expect(found.body.data).toHaveLength(2);
      return found.body;
    });
    expect(listed.data.map((o: { id: string }) => o.id)).toEqual(orders);
    expect(listed.data[0]).toMatchObject({
      object: 'order',
      product: { name: 'Tea mug', type: 'ONE_TIME' },
      amount: 480,
      amount_refunded: 0,
      status: 'paid',
      payment_method: { last4: '4242' },
    });
    const second = await admin(org.id, `${path}&limit=1&starting_after=${orders[0]}`);
    expect([second.body.data.map((o: { id: string }) => o.id), second.body.has_more]).toEqual([[orders[1]], false]);
    for (const bad of [`${path}&starting_after=ord_nope`, `${path}&limit=0`, path.replace('SANDBOX', 'TEST')]) {
      expect((await admin(org.id, bad)).status).toBe(400);
    }
    // Another organization's, or a customer who bought nothing: an empty list.
    expect((await admin(other.id, path)).body.data).toEqual([]);
    expect((await admin(org.id, `/customers/${declining.customer_id}/orders?environment=SANDBOX`)).body.data).toEqual(
      [],
    );

    const operator = new DashboardAgent(platform.gatewayUrl);
    expect((await operator.signIn({ admin_token: ADMIN_TOKEN })).status).toBe(303);
    const page = await operator.get(`/dashboard/${org.id}/sandbox/customers/${paying.customer_id}`);
    const payments = page.html.slice(page.html.indexOf('<h2>Payments</h2>'));
    expect(payments).toContain('Tea mug');
    expect(payments).toContain(orders[0]);
    expect(payments).toContain('NT$480');
    expect(payments).toMatch(/Invoice INV-/);
  });

  it("lists the organization's payments of a range, both kinds, and exports them as CSV", async () => {
    // The subscriptions live on a test clock (May and June 2026, their charges at its times); the mugs were bought now.
    const day = (offsetDays: number) =>
      new Date(Date.now() + 8 * 3_600_000 + offsetDays * 86_400_000).toISOString().slice(0, 10);
    const from = '2026-04-30';
    const to = day(1);
    const range = `environment=SANDBOX&from=${encodeURIComponent(`${from}T00:00:00+08:00`)}&to=${encodeURIComponent(`${day(2)}T00:00:00+08:00`)}`;
    const charges = await admin(org.id, `/payments?${range}`);
    expect(charges.status).toBe(200);
    // The first invoices of both subscriptions and the declined renewal (with its retries, if any).
    expect(charges.body.data.length).toBeGreaterThanOrEqual(3);
    expect(charges.body.data.map((p: { status: string }) => p.status)).toEqual(
      expect.arrayContaining(['succeeded', 'failed']),
    );
    expect(charges.body.data.map((p: { customer_email: string }) => p.customer_email)).toEqual(
      expect.arrayContaining(['alice.wong@example.com', 'bob.chen@example.com']),
    );
    const times = charges.body.data.map((p: { created_at: string }) => p.created_at);
    const page = await admin(org.id, `/payments?${range}&limit=1`);
    const next = await admin(org.id, `/payments?${range}&limit=1&starting_after=${page.body.data[0].id}`);
    expect([page.body.has_more, next.body.data[0].id]).toEqual([true, charges.body.data[1].id]);
    const orders = await admin(org.id, `/orders?${range}`);
    expect(orders.body.data).toHaveLength(2);
    expect(orders.body.data[0]).toMatchObject({ customer_id: paying.customer_id, amount: 480 });
    const past = `environment=SANDBOX&from=2020-01-01T00:00:00Z&to=2020-02-01T00:00:00Z`;
    expect((await admin(org.id, `/payments?${past}`)).body.data).toEqual([]);
    expect((await admin(org.id, `/orders?${past}`)).body.data).toEqual([]);
    expect((await admin(other.id, `/orders?${range}`)).body.data).toEqual([]);
    for (const bad of [
      '/payments?environment=SANDBOX',
      `/payments?${range}&starting_after=in_nope:1`,
      `/orders?${range}&starting_after=ord_nope`,
      '/orders?environment=SANDBOX&from=yesterday&to=today',
    ]) {
      expect({ bad, status: (await admin(org.id, bad)).status }).toEqual({ bad, status: 400 });
    }

    const operator = new DashboardAgent(platform.gatewayUrl);
    await operator.signIn({ admin_token: ADMIN_TOKEN });
    const base = `/dashboard/${org.id}/sandbox`;
    const listed = await operator.get(`${base}/payments?from=${from}&to=${to}`);
    expect(listed.status).toBe(200);
    expect(listed.html).toContain('Tea mug');
    expect(listed.html).toContain(`${base}/invoices/${charges.body.data[0].invoice_id}`);
    const csv = await fetch(`${platform.gatewayUrl}${base}/payments.csv?from=${from}&to=${to}`, {
      headers: { cookie: operator.cookieHeader() },
    });
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('content-disposition')).toMatch(/attachment; filename="payments-sandbox-/);
    const bytes = Buffer.from(await csv.arrayBuffer());
    // A byte-order mark first, for spreadsheets to read UTF-8.
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    const lines = bytes.subarray(3).toString('utf8').trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'time_taipei,kind,status,amount_twd,amount_refunded_twd,customer_id,customer_email,reference,item,method,failure_message,processor,processor_reference',
    );
    const rows = lines.slice(1);
    expect(rows).toHaveLength(charges.body.data.length + 2);
    const oneTime = rows.filter((row) => row.includes(',one_time,paid,480,0,'));
    expect(oneTime).toHaveLength(2);
    // The simulator's trade for each order and each paid invoice charge; none for a declined one.
    expect(oneTime.every((row) => /,sandbox,[^,]+$/.test(row))).toBe(true);
    const invoiceRows = rows.filter((row) => row.includes(',invoice,'));
    expect(
      invoiceRows.filter((row) => row.includes(',invoice,succeeded,')).every((row) => /,sandbox,[^,]+$/.test(row)),
    ).toBe(true);
    expect(invoiceRows.filter((row) => row.includes(',invoice,failed,')).every((row) => row.endsWith(',,'))).toBe(true);
    expect(rows.filter((row) => row.includes(',invoice,'))).toHaveLength(times.length);
    const stamps = rows.map((row) => row.split(',')[0]);
    expect([...stamps].sort().reverse()).toEqual(stamps);
    const refused = await fetch(`${platform.gatewayUrl}${base}/payments.csv?from=${day(1)}&to=${day(-1)}`, {
      headers: { cookie: operator.cookieHeader() },
    });
    expect(refused.status).toBe(400);
  });

  it('finds a record by its id, an invoice by its number in any case, and customers by any text, from one box', async () => {
    const invoice = (await send('GET', `/invoices?subscription_id=${paying.id}`)).body.data[0];
    expect(
      (await admin(org.id, `/invoices?environment=SANDBOX&number=${invoice.number.toLowerCase()}`)).body.data,
    ).toEqual([expect.objectContaining({ id: invoice.id, number: invoice.number })]);
    expect((await admin(org.id, '/invoices?environment=SANDBOX&number=INV-999999')).body.data).toEqual([]);
    expect((await admin(other.id, `/invoices?environment=SANDBOX&number=${invoice.number}`)).body.data).toEqual([]);
    for (const bad of ['/invoices?number=INV-000001', `/invoices?environment=SANDBOX&number=${'9'.repeat(41)}`]) {
      expect((await admin(org.id, bad)).status).toBe(400);
    }

    const operator = new DashboardAgent(platform.gatewayUrl);
    await operator.signIn({ admin_token: ADMIN_TOKEN });
    const search = (q: string) => operator.get(`/dashboard/${org.id}/sandbox/search?q=${encodeURIComponent(q)}`);
    const byNumber = await search(invoice.number.toLowerCase());
    expect(byNumber.html).toContain(`href="/dashboard/${org.id}/sandbox/invoices/${invoice.id}"`);
    const byId = await search(paying.id);
    expect(byId.html).toContain(`href="/dashboard/${org.id}/sandbox/subscriptions/${paying.id}"`);
    const byText = await search('alice');
    expect(byText.html).toContain(`href="/dashboard/${org.id}/sandbox/customers/${paying.customer_id}"`);
    expect((await search('sub_nobody00000000')).html).toContain('Nothing matches sub_nobody00000000.');
    const odd = await search('\u0000<script>');
    expect(odd.status).toBe(200);
    expect(odd.html).not.toContain('<script>');
    // Another organization's record is not found by its id.
    const otherOrg = await operator.get(`/dashboard/${other.id}/sandbox/search?q=${paying.customer_id}`);
    expect(otherOrg.html).toContain(`Nothing matches ${paying.customer_id}.`);
  });

  it('lists subscriptions by status and customer', async () => {
    const ids = async (query: string) =>
      (await admin(org.id, `/subscriptions?environment=SANDBOX&${query}`)).body.data.map((s: { id: string }) => s.id);
    expect(await ids('status=PAST_DUE')).toEqual([declining.id]);
    expect(await ids('status=ACTIVE')).toEqual([paying.id]);
    expect(await ids(`customer=${paying.customer_id}`)).toEqual([paying.id]);
    expect(await ids('status=CANCELED')).toEqual([]);
    expect(await ids('')).toEqual([declining.id, paying.id].sort().reverse());
    // Each with whom it bills, which the dashboard's list shows instead of the customer's id.
    const listed = await admin(org.id, `/subscriptions?environment=SANDBOX&customer=${paying.customer_id}`);
    expect(listed.body.data[0]).toMatchObject({
      customer_email: 'alice.wong@example.com',
      customer_name: 'alice.wong',
    });
    const operator = new DashboardAgent(platform.gatewayUrl);
    await operator.signIn({ admin_token: ADMIN_TOKEN });
    const page = await operator.get(`/dashboard/${org.id}/sandbox/subscriptions`);
    expect(page.html).toContain(`customers/${paying.customer_id}">alice.wong@example.com</a>`);
    expect(page.html).toContain(`customers/${declining.customer_id}">bob.chen@example.com</a>`);
  });

  it('answers 404 for another organization’s customer and 400 for bad parameters', async () => {
    for (const [organization, path] of [
      [other.id, `/customers/${paying.customer_id}/payments?environment=SANDBOX`],
      [org.id, `/customers/${paying.customer_id}/payments?environment=PRODUCTION`],
      [org.id, '/customers/cus_missing/payments?environment=SANDBOX'],
      ['org_missing', '/customers?environment=SANDBOX'],
      ['org_missing', '/subscriptions?environment=SANDBOX'],
    ] as const) {
      expect({ path, status: (await admin(organization, path)).status }).toEqual({ path, status: 404 });
    }
    for (const [path, parameter] of [
      ['/customers', 'environment'],
      ['/customers?environment=SANDBOX&limit=0', 'limit'],
      ['/customers?environment=SANDBOX&starting_after=cus_nope', 'starting_after'],
      [`/customers?environment=SANDBOX&query=${'x'.repeat(101)}`, 'query'],
      ['/subscriptions?environment=SANDBOX&status=paused', 'status'],
      ['/subscriptions?environment=SANDBOX&starting_after=sub_nope', 'starting_after'],
      [`/customers/${paying.customer_id}/payments?environment=SANDBOX&starting_after=in_x:1`, 'starting_after'],
      [`/customers/${paying.customer_id}/payments`, 'environment'],
    ]) {
      const bad = await admin(org.id, path!);
      expect({ path, status: bad.status, parameter: bad.body.error.details?.[0]?.path }).toEqual({
        path,
        status: 400,
        parameter,
      });
    }
  });

  it("shows on the customer's page every payment's trade and every refund, of purchases and of invoices", async () => {
    const [order] = (await admin(org.id, `/customers/${paying.customer_id}/orders?environment=SANDBOX`)).body.data;
    const [invoice] = (await send('GET', `/invoices?customer_id=${paying.customer_id}&status=paid`)).body.data;
    const ofOrder = await send('POST', '/refunds', { order_id: order.id, amount: 80, reason: 'requested_by_customer' });
    const ofInvoice = await send('POST', '/refunds', { invoice_id: invoice.id, amount: 100 });
    expect([ofOrder.status, ofInvoice.status]).toEqual([201, 201]);

    const listed = await admin(org.id, `/refunds?environment=SANDBOX&invoices=${invoice.id}`);
    expect(listed.body.data.map((r: { id: string }) => r.id)).toEqual([ofInvoice.body.id]);
    expect((await admin(org.id, '/refunds?environment=SANDBOX&invoices=')).status).toBe(400);

    const operator = new DashboardAgent(platform.gatewayUrl);
    expect((await operator.signIn({ admin_token: ADMIN_TOKEN })).status).toBe(303);
    const page = await eventually(async () => {
      const shown = await operator.get(`/dashboard/${org.id}/sandbox/customers/${paying.customer_id}`);
      expect(shown.html).toContain(ofInvoice.body.id);
      return shown;
    });
    const payments = page.html.slice(page.html.indexOf('<h2>Payments</h2>'), page.html.indexOf('<h2>Refunds</h2>'));
    expect(payments).toContain(`Sandbox <code>${order.processor_reference}</code>`);
    expect(payments).toContain(`Sandbox <code>${invoice.id}:1</code>`);
    const refunds = page.html.slice(page.html.indexOf('<h2>Refunds</h2>'));
    expect(refunds).toContain(ofOrder.body.id);
    expect(refunds).toContain('NT$80');
    expect(refunds).toContain('requested_by_customer');
    expect(refunds).toMatch(new RegExp(`Invoice ${invoice.number}</a> · <code>${ofInvoice.body.id}</code>`));
  });
});
