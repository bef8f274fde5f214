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

jest.setTimeout(240_000);

/** A Taipei calendar day, `offset` days from today. */
const taipeiDay = (offset = 0) => new Date(Date.now() + 8 * 3_600_000 + offset * 86_400_000).toISOString().slice(0, 10);
const TAIPEI_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+08:00$/;

/**
 * The dashboard's money lists and exports through the gateway, on Kafka (docs/dashboard-api.md):
 * invoices and refunds lists, the date-range and status filters of every list, Next links, and
 * each list's CSV export, streamed.
 */
describe('dashboard lists and exports', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let other: CreatedOrganization;
  let operator: DashboardAgent;
  let base: string;
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => org.api_keys.sandbox.secret_key,
  );
  const admin = (organization: string, path: string) => client.admin('GET', `/organizations/${organization}${path}`);
  const download = async (path: string) => {
    const response = await fetch(`${platform.gatewayUrl}${base}/${path}`, {
      headers: { cookie: operator.cookieHeader() },
    });
    const bytes = Buffer.from(await response.arrayBuffer());
    const hasBom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
    const lines = bytes
      .subarray(hasBom ? 3 : 0)
      .toString('utf8')
      .split('\r\n')
      .filter((line) => line !== '');
    return { response, hasBom, header: lines[0], rows: lines.slice(1) };
  };

  /** Pays `product_slug` on the hosted page as `email` (named `name`); the session. */
  async function buy(slug: string, email: string, name = 'Buyer') {
    const created = await send('POST', '/checkout/sessions', {
      product_slug: slug,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
    });
    expect(created.status).toBe(201);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${created.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ email, name, card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    return (await send('GET', `/checkout/sessions/${created.body.id}`)).body;
  }

  const BUYERS = 20;
  let alice: { customer: string; subscription: string; invoice: string; number: string };
  let mugOrder: string;
  let orderRefund: string;
  let invoiceRefund: string;

  beforeAll(async () => {
    // Twenty-two buyers pay on the hosted page from one address within a minute.
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Acme');
    other = await client.createOrganization('Other');
    await client.createProduct(org.id, plan({ slug: 'monthly', price: 300 }));
    await client.createProduct(
      org.id,
      plan({ slug: 'mug', name: 'Tea mug', type: 'ONE_TIME', interval: null, interval_count: 1, price: 480 }),
    );
    const subscribed = await buy('monthly', 'alice@example.com', 'Alice');
    mugOrder = (await buy('mug', 'alice@example.com', 'Alice')).order_id;
    // One buyer's name is what a spreadsheet would run as a formula.
    for (let i = 0; i < BUYERS; i++) await buy('mug', `buyer${i}@example.com`, i === 0 ? '=SUM(1,2)' : `Buyer ${i}`);
    alice = await eventually(async () => {
      const invoices = await send('GET', `/invoices?subscription_id=${subscribed.subscription_id}`);
      expect(invoices.body.data).toHaveLength(1);
      const [invoice] = invoices.body.data;
      return {
        customer: invoice.customer_id,
        subscription: subscribed.subscription_id,
        invoice: invoice.id,
        number: invoice.number,
      };
    }, 30_000);
    orderRefund = (await send('POST', '/refunds', { order_id: mugOrder, amount: 200 })).body.id;
    invoiceRefund = (await send('POST', '/refunds', { invoice_id: alice.invoice, amount: 100 })).body.id;
    await eventually(async () => {
      // Billing records the invoice's refund from checkout's event, and every buyer as a customer.
      expect((await send('GET', `/invoices/${alice.invoice}`)).body.amount_refunded).toBe(100);
      const customers = await admin(org.id, '/customers?environment=SANDBOX&limit=100');
      expect(customers.body.data).toHaveLength(BUYERS + 1);
    }, 30_000);
    operator = new DashboardAgent(platform.gatewayUrl);
    expect((await operator.signIn({ admin_token: ADMIN_TOKEN })).status).toBe(303);
    base = `/dashboard/${org.id}/sandbox`;
  });
  afterAll(() => platform.stop());

  it("lists the organization's invoices by status and range through the admin API and the dashboard", async () => {
    const listed = await admin(org.id, '/invoices?environment=SANDBOX&status=paid');
    expect(listed.body).toMatchObject({
      has_more: false,
      data: [{ id: alice.invoice, customer_email: 'alice@example.com', amount_refunded: 100 }],
    });
    expect((await admin(org.id, '/invoices?environment=SANDBOX&status=open')).body.data).toEqual([]);
    expect((await admin(other.id, '/invoices?environment=SANDBOX')).body.data).toEqual([]);

    const page = await operator.get(`${base}/invoices`);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`<a href="${base}/invoices/${alice.invoice}">${alice.number}</a>`);
    expect(page.html).toContain('alice@example.com');
    expect(page.html).toContain('NT$300');
    // Reached from the payments list, and it reaches the refunds list.
    expect((await operator.get(`${base}/payments`)).html).toContain(`href="${base}/invoices"`);
    expect(page.html).toContain(`href="${base}/refunds"`);
    expect((await operator.get(`${base}/invoices?status=open`)).html).toContain('No invoices in these days.');
    expect((await operator.get(`${base}/invoices?from=2020-01-01&to=2020-01-31`)).html).toContain(
      'No invoices in these days.',
    );
    const wrong = await operator.get(`${base}/invoices?from=${taipeiDay(1)}&to=${taipeiDay(-1)}`);
    expect(wrong.html).toContain('Choose two days, the first not after the last.');
    expect(wrong.html).not.toContain('Export CSV');

    const csv = await download(`invoices.csv?from=${taipeiDay()}&to=${taipeiDay()}&status=paid`);
    expect(csv.response.headers.get('content-disposition')).toBe(
      `attachment; filename="invoices-sandbox-${taipeiDay()}-to-${taipeiDay()}.csv"`,
    );
    expect(csv.hasBom).toBe(true);
    expect(csv.header).toBe(
      'created_at,invoice_id,number,status,customer_id,customer_email,subscription_id,order_id,total_twd,amount_paid_twd,amount_due_twd,amount_refunded_twd,period_start,period_end,paid_at',
    );
    expect(csv.rows).toHaveLength(1);
    const cells = csv.rows[0]!.split(',');
    expect(cells[0]).toMatch(TAIPEI_TIME);
    expect(cells.slice(1, 10)).toEqual([
      alice.invoice,
      alice.number,
      'paid',
      alice.customer,
      'alice@example.com',
      alice.subscription,
      expect.stringMatching(/^ord_/),
      '300',
      '300',
    ]);
    expect(cells.slice(10, 12)).toEqual(['0', '100']);
    expect((await download('invoices.csv?status=void')).rows).toEqual([]);
  });

  it('lists every refund of invoices and orders, newest first, with its customer, and exports them', async () => {
    const refunds = await admin(org.id, '/refunds?environment=SANDBOX');
    expect(refunds.body.data.map((r: { id: string }) => r.id)).toEqual([invoiceRefund, orderRefund]);
    expect(refunds.body.data[1]).toMatchObject({
      amount: 200,
      status: 'succeeded',
      order_id: mugOrder,
      customer_email: 'alice@example.com',
      product_name: 'Tea mug',
    });
    expect((await admin(org.id, '/refunds?environment=SANDBOX&status=failed')).body.data).toEqual([]);
    expect((await admin(other.id, '/refunds?environment=SANDBOX')).body.data).toEqual([]);

    const page = await operator.get(`${base}/refunds`);
    expect(page.status).toBe(200);
    expect(page.html).toContain(`<a href="${base}/invoices/${alice.invoice}">Invoice ${alice.number}</a>`);
    expect(page.html).toContain(`Tea mug · <code>${mugOrder}</code>`);
    expect(page.html).toContain('NT$200');
    expect(page.html).toContain('NT$100');
    expect(page.html.indexOf('NT$100')).toBeLessThan(page.html.indexOf('NT$200'));
    expect(page.html).toContain(`href="${base}/customers/${alice.customer}">alice@example.com</a>`);
    expect((await operator.get(`${base}/refunds?status=pending`)).html).toContain('No refunds in these days.');
    const otherPage = await operator.get(`/dashboard/${other.id}/sandbox/refunds`);
    expect(otherPage.html).toContain('No refunds in these days.');
    expect(otherPage.html).not.toContain(mugOrder);
    // The search box finds each refund by its id, with what it gave back from.
    const search = async (q: string, organization = org.id) =>
      (await operator.get(`/dashboard/${organization}/sandbox/search?q=${q}`)).html;
    expect(await search(orderRefund)).toContain(`Order <code>${mugOrder}</code>`);
    expect(await search(invoiceRefund)).toContain(`href="${base}/invoices/${alice.invoice}"`);
    expect(await search(orderRefund, other.id)).toContain(`Nothing matches ${orderRefund}.`);

    const csv = await download('refunds.csv');
    expect(csv.header).toBe(
      'created_at,refund_id,status,amount_twd,reason,failure_reason,kind,invoice_id,invoice_number,order_id,item,customer_id,customer_email',
    );
    expect(csv.rows).toHaveLength(2);
    const [invoiceRow, orderRow] = csv.rows.map((row) => row.split(','));
    expect(invoiceRow!.slice(0, 9)).toEqual([
      expect.stringMatching(TAIPEI_TIME),
      invoiceRefund,
      'succeeded',
      '100',
      '',
      '',
      'invoice',
      alice.invoice,
      alice.number,
    ]);
    expect(invoiceRow!.slice(11)).toEqual([alice.customer, 'alice@example.com']);
    expect(orderRow!.slice(1, 11)).toEqual([
      orderRefund,
      'succeeded',
      '200',
      '',
      '',
      'order',
      '',
      '',
      mugOrder,
      'Tea mug',
    ]);
    expect(orderRow![12]).toBe('alice@example.com');
    expect((await download(`refunds.csv?from=${taipeiDay(1)}&to=${taipeiDay(-1)}`)).response.status).toBe(400);
  });

  it('filters customers and subscriptions by the day they were created, pages them, and exports them', async () => {
    const today = taipeiDay();
    const first = await operator.get(`${base}/customers?from=${today}&to=${today}`);
    expect(first.html.match(/<a href="[^"]+\/customers\/cus_/g)).toHaveLength(20);
    const next = /<a href="([^"]+)">Next page<\/a>/.exec(first.html)?.[1]?.replaceAll('&amp;', '&');
    expect(next).toContain(`from=${today}&to=${today}&after=cus_`);
    const second = await operator.get(next!);
    expect(second.html.match(/<a href="[^"]+\/customers\/cus_/g)).toHaveLength(1);
    expect(second.html).not.toContain('Next page');
    expect((await operator.get(`${base}/customers?to=2020-01-01`)).html).toContain('No customer matches.');
    expect((await operator.get(`${base}/customers?q=alice&from=${today}`)).html).toContain('alice@example.com');

    const customers = await download(`customers.csv?from=${today}`);
    expect(customers.response.headers.get('content-disposition')).toBe(
      `attachment; filename="customers-sandbox-from-${today}.csv"`,
    );
    expect(customers.header).toBe(
      'created_at,customer_id,email,name,external_id,status,subscriptions_count,orders_count',
    );
    expect(customers.rows).toHaveLength(BUYERS + 1);
    // A name a spreadsheet would run as a formula is text, quoted for its comma.
    expect(customers.rows.find((row) => row.includes('buyer0@example.com'))).toContain(`,"'=SUM(1,2)",`);
    expect(customers.rows.find((row) => row.includes('alice@example.com'))).toMatch(/,Alice,,ACTIVE,1,\d+$/);
    expect((await download('customers.csv?to=2020-01-01')).rows).toEqual([]);

    const subscriptions = await operator.get(`${base}/subscriptions?status=ACTIVE&from=${today}`);
    expect(subscriptions.html).toContain(`${base}/subscriptions/${alice.subscription}`);
    expect((await operator.get(`${base}/subscriptions?to=2020-01-01`)).html).toContain('No subscriptions.');
    const csv = await download(`subscriptions.csv?from=${today}&to=${today}&status=ACTIVE`);
    expect(csv.header).toBe(
      'created_at,subscription_id,status,customer_id,customer_email,customer_name,product_id,product_name,price_twd,interval,interval_count,current_period_start,current_period_end,trial_end,cancel_at_period_end,canceled_at',
    );
    expect(csv.rows).toHaveLength(1);
    const cells = csv.rows[0]!.split(',');
    expect(cells[0]).toMatch(TAIPEI_TIME);
    expect(cells.slice(1, 6)).toEqual([alice.subscription, 'ACTIVE', alice.customer, 'alice@example.com', 'Alice']);
    expect(cells.slice(8, 11)).toEqual(['300', 'month', '1']);
    expect(cells[14]).toBe('false');
    expect((await download('subscriptions.csv?status=CANCELED')).rows).toEqual([]);
  });

  it('filters payments by status, pages them by a cursor of both lists, and exports the filter', async () => {
    const paid = await operator.get(`${base}/payments?status=paid`);
    expect(paid.html).toContain('Tea mug');
    expect(paid.html).toContain(`${base}/invoices/${alice.invoice}`);
    const failed = await operator.get(`${base}/payments?status=failed`);
    expect(failed.html).toContain('No payments in these days.');
    expect((await download('payments.csv?status=failed')).rows).toEqual([]);
    const all = await download('payments.csv?status=paid');
    expect(all.rows).toHaveLength(BUYERS + 2);
    expect(all.rows.every((row) => TAIPEI_TIME.test(row.split(',')[0]!))).toBe(true);
    // The page after alice's mug in checkout's list, and nothing yet of billing's: her invoice, and the mugs bought before hers (none).
    const after = await operator.get(`${base}/payments?after=${encodeURIComponent(`,${mugOrder}`)}`);
    expect(after.html).toContain(`${base}/invoices/${alice.invoice}`);
    expect(after.html).not.toContain('Tea mug');
    // A cursor the lists do not know is the API's refusal, on the page.
    const unknown = await operator.get(`${base}/payments?after=${encodeURIComponent('in_nope:1,ord_nope')}`);
    expect(unknown.html).toContain('role="alert"');
  });
});
