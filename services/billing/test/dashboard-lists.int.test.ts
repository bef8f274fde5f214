import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { renewDue } from '../src/engine/renewals/renew';
import { admin, caller, client, feeds, newOrg } from './helpers';

/**
 * The dashboard's lists (docs/dashboard-api.md, item 4): invoices by status, customer, creation
 * time, number and id; customers and subscriptions by creation time; charges by status. Each
 * newest first, paged by its last id, confined to the organization and environment.
 */
jest.setTimeout(120_000);

let running: ServiceUnderTest;
/** The service's clock: what each customer, subscription and first invoice is created at. */
let clock = new Date('2026-03-01T02:00:00Z');

beforeAll(async () => {
  running = await startServiceForTest(billingService, {
    now: () => clock,
    config: { BILLING_TRIAL_SWEEP_INTERVAL_MS: '3600000' },
  });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);
const list = (org: string, path: string) => call('GET', `/admin${path}`, admin(org));
const ids = async (org: string, path: string) => {
  const reply = await list(org, path);
  expect({ path, status: reply.status }).toEqual({ path, status: 200 });
  return reply.body.data.map((item: { id: string }) => item.id) as string[];
};

type Bought = { customer: string; subscription: string; invoice: string; number: string };

/** A paid checkout of the monthly plan at `at`: its customer, subscription and paid first invoice. */
async function buy(org: string, plan: string, email: string, at: string): Promise<Bought> {
  clock = new Date(at);
  await paid(org, { product_id: plan, customer_email: email, completed_at: at });
  return eventually(async () => {
    const customers = await call('GET', `/v1/customers?email=${email}`, caller(org));
    const customer = customers.body.data[0]?.id;
    const invoices = await call('GET', `/v1/invoices?customer_id=${customer}`, caller(org));
    expect(invoices.body.data).toHaveLength(1);
    const [invoice] = invoices.body.data;
    return { customer, subscription: invoice.subscription_id, invoice: invoice.id, number: invoice.number };
  }, 20_000);
}

/** Its first renewal declined (no saved card): the subscription PAST_DUE, a new invoice open. */
async function declineRenewal(org: string, bought: Bought): Promise<string> {
  const subscription = (await call('GET', `/v1/subscriptions/${bought.subscription}`, caller(org))).body;
  const at = new Date(subscription.current_period_end);
  await renewDue(
    running.service.context,
    { id: subscription.id, organization: org, environment: 'SANDBOX', due_at: at },
    at,
  );
  const open = await call('GET', `/v1/invoices?subscription_id=${subscription.id}&status=open`, caller(org));
  expect(open.body.data).toHaveLength(1);
  return open.body.data[0].id;
}

const taipei = (day: string) => encodeURIComponent(`${day}T00:00:00+08:00`);

let org: string;
let other: string;
let ada: Bought;
let bob: Bought;
let cy: Bought;
let stranger: Bought;
/** Bob's renewal, declined on 2026-04-10. */
let open: string;

beforeAll(async () => {
  org = newOrg();
  other = newOrg();
  const plan = await product(org);
  ada = await buy(org, plan, 'ada@example.com', '2026-03-01T02:00:00.000Z');
  bob = await buy(org, plan, 'bob@example.com', '2026-03-10T02:00:00.000Z');
  cy = await buy(org, plan, 'cy@example.com', '2026-03-20T02:00:00.000Z');
  stranger = await buy(other, await product(other), 'ada@example.com', '2026-03-10T02:00:00.000Z');
  open = await declineRenewal(org, bob);
});

describe('GET /admin/invoices', () => {
  it("lists the organization's invoices newest first, each with its customer's email", async () => {
    const all = await list(org, '/invoices?environment=SANDBOX');
    expect(all.body).toMatchObject({ object: 'list', has_more: false });
    expect(all.body.data.map((i: { id: string }) => i.id)).toEqual([open, cy.invoice, bob.invoice, ada.invoice]);
    expect(all.body.data[0]).toMatchObject({
      object: 'invoice',
      id: open,
      status: 'open',
      customer_id: bob.customer,
      customer_email: 'bob@example.com',
      amount_paid: 0,
    });
    expect(all.body.data[3]).toMatchObject({ status: 'paid', customer_email: 'ada@example.com', amount_paid: 299 });
  });

  it('filters by status, customer, creation range, number and ids, together', async () => {
    const path = (query: string) => `/invoices?environment=SANDBOX&${query}`;
    expect(await ids(org, path('status=paid'))).toEqual([cy.invoice, bob.invoice, ada.invoice]);
    expect(await ids(org, path('status=open'))).toEqual([open]);
    expect(await ids(org, path('status=void'))).toEqual([]);
    expect(await ids(org, path(`customer=${bob.customer}`))).toEqual([open, bob.invoice]);
    expect(await ids(org, path(`customer=${bob.customer}&status=paid`))).toEqual([bob.invoice]);
    // Taipei days: from the 5th of March to the end of the 15th.
    expect(await ids(org, path(`from=${taipei('2026-03-05')}&to=${taipei('2026-03-16')}`))).toEqual([bob.invoice]);
    expect(await ids(org, path(`from=${taipei('2026-03-05')}`))).toEqual([open, cy.invoice, bob.invoice]);
    expect(await ids(org, path(`to=${taipei('2026-03-10')}`))).toEqual([ada.invoice]);
    // The bound is the instant itself: created at 10:00 in Taipei, inside from 10:00, outside before it.
    expect(await ids(org, path(`from=${encodeURIComponent('2026-03-01T10:00:00+08:00')}`))).toContain(ada.invoice);
    expect(await ids(org, path(`to=${encodeURIComponent('2026-03-01T10:00:00+08:00')}`))).toEqual([]);
    expect(await ids(org, path(`number=${ada.number.toLowerCase()}`))).toEqual([ada.invoice]);
    expect(await ids(org, path('number=INV-999999'))).toEqual([]);
    expect(await ids(org, path(`ids=${ada.invoice},${cy.invoice}`))).toEqual([cy.invoice, ada.invoice]);
    expect(await ids(org, path(`ids=${ada.invoice},${cy.invoice}&status=open`))).toEqual([]);
  });

  it('pages by the last invoice seen, with the filters kept', async () => {
    const first = await list(org, '/invoices?environment=SANDBOX&limit=2');
    expect([first.body.data.map((i: { id: string }) => i.id), first.body.has_more]).toEqual([[open, cy.invoice], true]);
    const second = await list(org, `/invoices?environment=SANDBOX&limit=2&starting_after=${cy.invoice}`);
    expect([second.body.data.map((i: { id: string }) => i.id), second.body.has_more]).toEqual([
      [bob.invoice, ada.invoice],
      false,
    ]);
    const paidPage = await list(org, `/invoices?environment=SANDBOX&status=paid&limit=1&starting_after=${cy.invoice}`);
    expect([paidPage.body.data.map((i: { id: string }) => i.id), paidPage.body.has_more]).toEqual([
      [bob.invoice],
      true,
    ]);
  });

  it("never shows another organization's or environment's invoices", async () => {
    expect(await ids(other, '/invoices?environment=SANDBOX')).toEqual([stranger.invoice]);
    expect(await ids(org, '/invoices?environment=PRODUCTION')).toEqual([]);
    expect(await ids(org, `/invoices?environment=SANDBOX&ids=${stranger.invoice}`)).toEqual([]);
    expect(await ids(org, `/invoices?environment=SANDBOX&customer=${stranger.customer}`)).toEqual([]);
    expect(await ids(other, `/invoices?environment=SANDBOX&number=${ada.number}`)).toEqual([stranger.invoice]);
    // Another organization's invoice is no cursor here.
    const cursor = await list(org, `/invoices?environment=SANDBOX&starting_after=${stranger.invoice}`);
    expect([cursor.status, cursor.body.error.details[0].path]).toEqual([400, 'starting_after']);
  });
});

describe('GET /admin/customers and /admin/subscriptions', () => {
  it('filter by the creation range, with the other filters and paging', async () => {
    const march5 = taipei('2026-03-05');
    const march16 = taipei('2026-03-16');
    expect(await ids(org, `/customers?environment=SANDBOX&from=${march5}`)).toEqual([cy.customer, bob.customer]);
    expect(await ids(org, `/customers?environment=SANDBOX&to=${march16}`)).toEqual([bob.customer, ada.customer]);
    expect(await ids(org, `/customers?environment=SANDBOX&from=${march5}&to=${march16}`)).toEqual([bob.customer]);
    expect(await ids(org, `/customers?environment=SANDBOX&from=${march5}&query=ada@`)).toEqual([]);
    expect(await ids(org, `/customers?environment=SANDBOX&from=${march5}&query=bob@`)).toEqual([bob.customer]);
    const page = await list(org, `/customers?environment=SANDBOX&from=${march5}&limit=1`);
    expect([page.body.data[0].id, page.body.has_more]).toEqual([cy.customer, true]);
    expect(await ids(org, `/customers?environment=SANDBOX&from=${march5}&starting_after=${cy.customer}`)).toEqual([
      bob.customer,
    ]);

    expect(await ids(org, `/subscriptions?environment=SANDBOX&from=${march5}`)).toEqual([
      cy.subscription,
      bob.subscription,
    ]);
    expect(await ids(org, `/subscriptions?environment=SANDBOX&to=${march16}&status=ACTIVE`)).toEqual([
      ada.subscription,
    ]);
    expect(await ids(org, `/subscriptions?environment=SANDBOX&to=${march16}&status=PAST_DUE`)).toEqual([
      bob.subscription,
    ]);
    const subscriptions = await list(org, `/subscriptions?environment=SANDBOX&from=${march5}&limit=1`);
    expect([subscriptions.body.data[0].id, subscriptions.body.has_more]).toEqual([cy.subscription, true]);
    expect(await ids(other, `/subscriptions?environment=SANDBOX&to=${march16}`)).toEqual([stranger.subscription]);
  });
});

describe('GET /admin/payments', () => {
  it('lists paid charges only, or declined ones only', async () => {
    const range = `environment=SANDBOX&from=${taipei('2026-03-01')}&to=${taipei('2026-05-01')}`;
    const statuses = async (query: string) =>
      (await list(org, `/payments?${range}${query}`)).body.data.map((p: { invoice_id: string; status: string }) => [
        p.invoice_id,
        p.status,
      ]);
    expect(await statuses('&status=failed')).toEqual([[open, 'failed']]);
    expect(await statuses('&status=succeeded')).toEqual([
      [cy.invoice, 'succeeded'],
      [bob.invoice, 'succeeded'],
      [ada.invoice, 'succeeded'],
    ]);
    expect(await statuses('')).toHaveLength(4);
    const first = await list(org, `/payments?${range}&status=succeeded&limit=1`);
    const next = await list(org, `/payments?${range}&status=succeeded&limit=1&starting_after=${first.body.data[0].id}`);
    expect([first.body.has_more, next.body.data[0].invoice_id]).toEqual([true, bob.invoice]);
    expect((await list(other, `/payments?${range}&status=failed`)).body.data).toEqual([]);
  });
});

describe('bad input', () => {
  it('answers 400 in the error envelope naming the parameter, and changes nothing', async () => {
    const before = await eventCount();
    const manyIds = Array.from({ length: 101 }, (_, i) => `in_${i}`).join(',');
    for (const [path, parameter] of [
      ['/invoices', 'environment'],
      ['/invoices?environment=SANDBOX&status=refunded', 'status'],
      ['/invoices?environment=SANDBOX&from=2026-03-01', 'from'],
      ['/invoices?environment=SANDBOX&to=yesterday', 'to'],
      ['/invoices?environment=SANDBOX&limit=0', 'limit'],
      ['/invoices?environment=SANDBOX&limit=101', 'limit'],
      ['/invoices?environment=SANDBOX&starting_after=in_nope', 'starting_after'],
      [`/invoices?environment=SANDBOX&ids=${manyIds}`, 'ids'],
      ['/invoices?environment=SANDBOX&ids=', 'ids.0'],
      [`/invoices?environment=SANDBOX&number=${'9'.repeat(41)}`, 'number'],
      ['/customers?environment=SANDBOX&from=2026-13-01T00:00:00Z', 'from'],
      ['/subscriptions?environment=SANDBOX&to=soon', 'to'],
      ['/payments?environment=SANDBOX&from=2026-03-01T00:00:00Z&to=2026-04-01T00:00:00Z&status=paid', 'status'],
    ]) {
      const reply = await list(org, path!);
      expect({
        path,
        status: reply.status,
        code: reply.body.error?.code,
        parameter: reply.body.error?.details?.[0]?.path,
      }).toEqual({ path, status: 400, code: 'bad_request', parameter });
    }
    expect(await eventCount()).toBe(before);
  });
});

async function eventCount(): Promise<number> {
  const { store } = running.service.context;
  const { rows } = await store.database.query<{ count: string }>(
    `SELECT count(*) FROM ${store.tables.events} WHERE organization = $1`,
    [org],
  );
  return Number(rows[0]!.count);
}
