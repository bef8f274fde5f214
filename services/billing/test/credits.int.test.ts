import { randomUUID } from 'node:crypto';
import { genericPlan } from '@billing/eventstore';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { billingService } from '../src';
import { creditTables, migrateCreditsReadModel, spendKeysInsert } from '../src/credits/read-model';
import { earlierSpendsQuery } from '../src/credits/spend-batches';
import { RECENT_SPEND_KEYS } from '../src/credits/ledger';
import { spendCredits } from '../src/credits/spend';
import { timesOfCustomers } from '../src/customers/queries';
import { expireDueCredits } from '../src/engine/credit-expiries';
import { admin, caller, client, eventsOf, feeds, newOrg } from './helpers';

jest.setTimeout(120000);

/** The service's clock, moved by the tests to pass expiries. */
let clock = new Date('2026-03-01T00:00:00.000Z');
const DAY = 86_400_000;
const inDays = (n: number) => new Date(clock.getTime() + n * DAY).toISOString();

let running: ServiceUnderTest;
beforeAll(async () => {
  running = await startServiceForTest(billingService, { now: () => clock });
});
afterAll(() => running.stop());

const { call } = client(() => running);
const { product, paid } = feeds(() => running);

/** A customer of a new organization (made by a paid one-time checkout), and calls on its credits. */
async function customer() {
  const org = newOrg();
  const email = `c-${randomUUID()}@example.com`;
  await paid(org, {
    product_id: await product(org, { type: 'ONE_TIME', interval: null }),
    mode: 'PAYMENT',
    customer_email: email,
  });
  let id = '';
  await eventually(async () => {
    const res = await call('GET', `/v1/customers?email=${email}`, caller(org));
    expect(res.body.data).toHaveLength(1);
    id = res.body.data[0].id;
  }, 20000);
  const path = `/v1/customers/${id}/credits`;
  return {
    org,
    id,
    balance: () => call('GET', path, caller(org)),
    ledger: (query = '') => call('GET', `${path}/ledger${query}`, caller(org)),
    grant: (body: Record<string, unknown>) => call('POST', `${path}/grants`, caller(org), { reason: 'test', ...body }),
    spend: (amount: unknown, key: string = randomUUID(), metadata?: Record<string, string>) =>
      call('POST', `${path}/spend`, caller(org), { amount, idempotency_key: key, ...(metadata ? { metadata } : {}) }),
    adjust: (amount: unknown) => call('POST', `${path}/adjustments`, caller(org), { amount, reason: 'refund' }),
  };
}

const amounts = (entries: Array<{ type: string; amount: number }>) => entries.map((e) => `${e.type}:${e.amount}`);

describe('credits of a customer', () => {
  it('grants, spends and answers the balance, the grants and the ledger', async () => {
    const c = await customer();
    const granted = await c.grant({ amount: 100, reason: 'welcome', expires_at: inDays(30), priority: 2 });
    expect(granted.status).toBe(201);
    expect(granted.body).toMatchObject({
      object: 'credit_grant',
      customer_id: c.id,
      amount: 100,
      remaining: 100,
      source: 'manual',
      source_id: null,
      reason: 'welcome',
      priority: 2,
      expires_at: inDays(30),
      created_at: clock.toISOString(),
      livemode: false,
    });
    expect(granted.body.id).toMatch(/^cgr_/);
    const spent = await c.spend(30, 'order-1', { order: '1' });
    expect(spent.status).toBe(200);
    expect(spent.body).toMatchObject({
      object: 'credit_spend',
      customer_id: c.id,
      amount: 30,
      balance: 70,
      idempotency_key: 'order-1',
      metadata: { order: '1' },
      livemode: false,
    });
    const balance = await c.balance();
    expect(balance.body).toEqual({
      object: 'credit_balance',
      customer_id: c.id,
      balance: 70,
      grants: [{ ...granted.body, remaining: 70 }],
      livemode: false,
    });
    const ledger = await c.ledger();
    expect(ledger.body).toMatchObject({ object: 'list', has_more: false, livemode: false });
    expect(ledger.body.data).toEqual([
      expect.objectContaining({
        object: 'credit_ledger_entry',
        id: spent.body.id,
        type: 'spend',
        amount: -30,
        balance_after: 70,
        grant_id: null,
        drawn_from: [{ grant_id: granted.body.id, amount: 30 }],
        metadata: { order: '1' },
      }),
      expect.objectContaining({
        id: granted.body.id,
        type: 'grant',
        amount: 100,
        balance_after: 100,
        reason: 'welcome',
      }),
    ]);
  });

  it('never goes below zero under 50 concurrent spends, and records each accepted one once', async () => {
    const c = await customer();
    expect((await c.grant({ amount: 30 })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => c.spend(1, `burst-${i}`)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(30);
    expect(statuses.filter((s) => s === 402)).toHaveLength(20);
    for (const refused of answers.filter((a) => a.status === 402)) {
      expect(refused.body.error.code).toBe('insufficient_credits');
    }
    expect((await c.balance()).body.balance).toBe(0);
    const ledger = await c.ledger('?limit=100');
    const spends = ledger.body.data.filter((e: { type: string }) => e.type === 'spend');
    expect(spends).toHaveLength(30);
    const accepted = answers.filter((a) => a.status === 200).map((a) => a.body.id);
    expect(spends.map((e: { id: string }) => e.id).sort()).toEqual(accepted.sort());
    expect(spends.map((e: { balance_after: number }) => e.balance_after).sort((a: number, b: number) => a - b)).toEqual(
      Array.from({ length: 30 }, (_, i) => i),
    );

    // A spend already made answers again, even with the balance at 0.
    const again = await c.spend(1, 'burst-0');
    const first = answers[0]!;
    expect(again.status).toBe(first.status);
    if (first.status === 200) expect(again.body).toEqual(first.body);
  });

  it('spends once per idempotency key, also when the repeats arrive together', async () => {
    const c = await customer();
    await c.grant({ amount: 10 });
    const answers = await Promise.all(Array.from({ length: 10 }, () => c.spend(3, 'same-key')));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
    expect(answers.every((a) => a.body.balance === 7)).toBe(true);
    expect((await c.balance()).body.balance).toBe(7);
    expect(amounts((await c.ledger()).body.data)).toEqual(['spend:-3', 'grant:10']);

    const other = await c.spend(4, 'same-key');
    expect(other.status).toBe(400);
    expect(other.body.error.code).toBe('idempotency_key_mismatch');
  });

  it('answers a key older than the ledger state keeps from credit_spend_keys, also for spends made before it', async () => {
    const c = await customer();
    await c.grant({ amount: 1000 });
    const first = await c.spend(5, 'first', { order: 'a' });
    for (let i = 0; i < RECENT_SPEND_KEYS + 25; i++) expect((await c.spend(1, `later-${i}`)).status).toBe(200);
    const balance = 1000 - 5 - (RECENT_SPEND_KEYS + 25);
    const again = await c.spend(5, 'first', { order: 'a' });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect((await c.spend(5, 'first', { order: 'b' })).body.error.code).toBe('idempotency_key_mismatch');
    expect((await c.balance()).body.balance).toBe(balance);

    // A ledger whose keys lived only in its events (before the table): the table is made from them.
    const { store } = running.service.context;
    await store.database.exec(`DROP TABLE ${creditTables(store.tables.schema).spendKeys}`);
    await migrateCreditsReadModel(store);
    const afterMigration = await c.spend(5, 'first', { order: 'a' });
    expect(afterMigration.body).toEqual(first.body);
    expect((await c.spend(1, 'later-0')).body.balance).toBe(1000 - 5 - 1);
    expect((await c.balance()).body.balance).toBe(balance);
  });

  it("looks each spend's key up by the primary key, in the plans prepared statements keep", async () => {
    // Planned on a small, never analysed table, as at a service's first spends: a join or an
    // anti-join was planned as a scan of every key, which every later batch then paid for.
    const { store } = running.service.context;
    const table = creditTables(store.tables.schema).spendKeys;
    const read = await genericPlan(store.database, earlierSpendsQuery(table), [`'{cus_1}'`, `'{key_1}'`]);
    const row = { customer_id: 'cus_1', idempotency_key: 'key_1', spend_id: 'csp_1', amount: 1, metadata: null };
    const insert = await genericPlan(store.database, spendKeysInsert(table), [
      `'${JSON.stringify([{ ...row, balance_after: 0, spent_at: '2026-03-01T00:00:00Z' }])}'`,
    ]);
    for (const plan of [read, insert]) {
      expect(plan).toMatch(/Index (Only )?Scan using credit_spend_keys_pkey/);
      expect(plan).not.toMatch(/Seq Scan on credit_spend_keys/);
    }
  });

  it('answers the first spend when a repeat raced past the key check: the table refuses a second', async () => {
    const c = await customer();
    await c.grant({ amount: 100 });
    const first = await c.spend(5, 'raced');
    // The key leaves the ledger's state, as it does under a burst of other spends.
    for (let i = 0; i < RECENT_SPEND_KEYS; i++) await c.spend(1, `fill-${i}`);
    const { store } = running.service.context;
    // The repeat's first read of credit_spend_keys comes before the first spend's commit.
    let missed = false;
    const database = new Proxy(store.database, {
      get(target, prop) {
        if (prop === 'query')
          return (text: string, params?: unknown[]) => {
            if (!missed && text.includes('credit_spend_keys')) {
              missed = true;
              return Promise.resolve({ rows: [] });
            }
            return target.query(text, params);
          };
        const value = Reflect.get(target, prop, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const racing = Object.create(store, { database: { value: database } }) as typeof store;
    const tenant = { organization: c.org, environment: 'SANDBOX' as const };
    const request = { amount: 5, idempotencyKey: 'raced', metadata: null };
    const spend = await spendCredits(
      { store: racing, customerTimes: async () => new Map() },
      {
        tenant,
        customerId: c.id,
        request,
        terms: { now: clock, settings: { livemode: false, lowBalanceThreshold: null } },
      },
    );
    expect(missed).toBe(true);
    expect(spend).toMatchObject({ spend_id: first.body.id, amount: 5, balance_after: 95 });
    expect((await c.balance()).body.balance).toBe(100 - 5 - RECENT_SPEND_KEYS);
    expect((await c.ledger('?limit=100')).body.data).toHaveLength(RECENT_SPEND_KEYS + 2);
  });

  it('refuses a spend or take-back over the balance with 402 and changes nothing', async () => {
    const c = await customer();
    await c.grant({ amount: 5 });
    const refused = await c.spend(6);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({ code: 'insufficient_credits', details: [{ balance: 5 }] });
    expect((await c.adjust(6)).status).toBe(402);
    expect((await c.balance()).body.balance).toBe(5);
    expect(amounts((await c.ledger()).body.data)).toEqual(['grant:5']);

    const taken = await c.adjust(2);
    expect(taken.status).toBe(201);
    expect(taken.body).toMatchObject({ object: 'credit_adjustment', amount: 2, balance: 3, reason: 'refund' });
    expect(amounts((await c.ledger()).body.data)).toEqual(['adjustment:-2', 'grant:5']);
  });

  it('burns the soonest expiry first, then the higher priority, then the older grant, never-expiring last', async () => {
    const c = await customer();
    const never = (await c.grant({ amount: 5, priority: 9 })).body.id;
    const late = (await c.grant({ amount: 5, expires_at: inDays(10) })).body.id;
    const lateHigh = (await c.grant({ amount: 5, expires_at: inDays(10), priority: 3 })).body.id;
    const later = (await c.grant({ amount: 5, expires_at: inDays(10) })).body.id;
    const soon = (await c.grant({ amount: 5, expires_at: inDays(5) })).body.id;
    expect((await c.balance()).body.grants.map((g: { id: string }) => g.id)).toEqual([
      soon,
      lateHigh,
      late,
      later,
      never,
    ]);
    await c.spend(22);
    const [spend] = (await c.ledger()).body.data;
    expect(spend.drawn_from).toEqual([
      { grant_id: soon, amount: 5 },
      { grant_id: lateHigh, amount: 5 },
      { grant_id: late, amount: 5 },
      { grant_id: later, amount: 5 },
      { grant_id: never, amount: 2 },
    ]);
  });

  it('never spends an expired grant, and records its expiry in the ledger', async () => {
    const c = await customer();
    const expiring = (await c.grant({ amount: 10, expires_at: inDays(1) })).body.id;
    await c.grant({ amount: 3 });
    clock = new Date(clock.getTime() + DAY);
    // Nothing has recorded the expiry yet: the spend sees it and records it first.
    const refused = await c.spend(4);
    expect(refused.status).toBe(402);
    expect(refused.body.error.details[0].balance).toBe(3);
    expect((await c.spend(2)).body.balance).toBe(1);
    const balance = await c.balance();
    expect(balance.body.balance).toBe(1);
    expect(balance.body.grants.map((g: { id: string }) => g.id)).not.toContain(expiring);
    const entries = (await c.ledger()).body.data;
    expect(amounts(entries)).toEqual(['spend:-2', 'expiry:-10', 'grant:3', 'grant:10']);
    expect(entries[1]).toMatchObject({ grant_id: expiring, balance_after: 3, created_at: clock.toISOString() });
  });

  it('expires grants from the sweep, and a read counts a grant past its expiry as expired', async () => {
    const c = await customer();
    await c.grant({ amount: 10, expires_at: inDays(1) });
    clock = new Date(clock.getTime() + 2 * DAY);
    await expireDueCredits(running.service.context);
    expect(amounts((await c.ledger()).body.data)).toEqual(['expiry:-10', 'grant:10']);
    expect((await c.balance()).body).toMatchObject({ balance: 0, grants: [] });

    const d = await customer();
    await d.grant({ amount: 4, expires_at: inDays(1) });
    clock = new Date(clock.getTime() + DAY);
    expect((await d.balance()).body).toMatchObject({ balance: 0, grants: [] });
    expect(amounts((await d.ledger()).body.data)).toEqual(['expiry:-4', 'grant:4']);
  });

  it('pages the ledger newest first with limit and starting_after', async () => {
    const c = await customer();
    for (let i = 1; i <= 5; i++) await c.grant({ amount: i });
    const first = await c.ledger('?limit=2');
    expect(amounts(first.body.data)).toEqual(['grant:5', 'grant:4']);
    expect(first.body.has_more).toBe(true);
    const second = await c.ledger(`?limit=2&starting_after=${first.body.data[1].id}`);
    expect(amounts(second.body.data)).toEqual(['grant:3', 'grant:2']);
    const last = await c.ledger(`?limit=2&starting_after=${second.body.data[1].id}`);
    expect(amounts(last.body.data)).toEqual(['grant:1']);
    expect(last.body.has_more).toBe(false);
    for (const query of ['?limit=0', '?limit=101', '?starting_after=cgr_unknown']) {
      const res = await c.ledger(query);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
  });

  it("is 404 for another organization's or environment's customer, as the customer is", async () => {
    const c = await customer();
    await c.grant({ amount: 5 });
    const customer404 = await call('GET', `/v1/customers/${c.id}`, caller(newOrg()));
    for (const who of [caller(newOrg()), caller(c.org, 'PRODUCTION')]) {
      for (const [method, path, body] of [
        ['GET', '/credits'],
        ['GET', '/credits/ledger'],
        ['POST', '/credits/grants', { amount: 5, reason: 'x' }],
        ['POST', '/credits/spend', { amount: 1, idempotency_key: 'k' }],
        ['POST', '/credits/adjustments', { amount: 1, reason: 'x' }],
      ] as const) {
        const res = await call(method, `/v1/customers/${c.id}${path}`, who, body);
        expect([method, path, res.status, res.body.error.code]).toEqual([method, path, 404, 'resource_not_found']);
        expect(res.body.error.message).toBe(customer404.body.error.message);
      }
    }
    expect((await c.balance()).body.balance).toBe(5);
  });

  it('refuses amounts that are not whole credits from 1 to 1,000,000,000 with 422', async () => {
    const c = await customer();
    for (const amount of [0, -1, 1.5, '5', null, 1_000_000_001]) {
      for (const res of [await c.grant({ amount }), await c.spend(amount), await c.adjust(amount)]) {
        expect([amount, res.status, res.body.error.code]).toEqual([amount, 422, 'validation_error']);
        expect(res.body.error.details[0]).toMatchObject({ path: 'amount' });
      }
    }
    const past = await c.grant({ amount: 5, expires_at: clock.toISOString() });
    expect(past.status).toBe(422);
    expect(past.body.error.details[0]).toMatchObject({ path: 'expires_at' });
    expect((await c.spend(1, '')).status).toBe(422);
    expect((await c.ledger()).body.data).toEqual([]);
  });
});

describe('spends in batches', () => {
  /** A second process on the same schema (a replica): a spend writer and remembered ledgers of its own. */
  const replica = () => Object.create(running.service.context.store) as typeof running.service.context.store;
  const spendOn = (store: ReturnType<typeof replica>, c: { org: string; id: string }, amount: number, key: string) =>
    spendCredits(
      { store, customerTimes: (tenant, ids) => timesOfCustomers({ store, now: () => clock }, tenant, ids) },
      {
        tenant: { organization: c.org, environment: 'SANDBOX' },
        customerId: c.id,
        request: { amount, idempotencyKey: key, metadata: null },
      },
    ).then(
      (spend) => ({ spend }),
      (error: { code?: string; message?: string }) => ({ refused: error.code ?? error.message }),
    );

  it('lets two replicas spend on one customer at once: never below zero, each key once', async () => {
    const c = await customer();
    await c.grant({ amount: 40 });
    const [one, two] = [replica(), replica()];
    // Each replica first remembers the ledger as it is, so that the other's writes make it stale.
    await spendOn(one, c, 1, 'warm-one');
    await spendOn(two, c, 1, 'warm-two');
    const answers = await Promise.all(
      Array.from({ length: 60 }, (_, i) => spendOn(i % 2 ? one : two, c, 1, `both-${i % 50}`)),
    );
    const spent = answers.flatMap((a) => ('spend' in a ? [a.spend.spend_id] : []));
    expect(answers.filter((a) => 'refused' in a).map((a) => ('refused' in a ? a.refused : ''))).toEqual(
      Array(answers.length - spent.length).fill('insufficient_credits'),
    );
    // 38 credits left for 50 keys; the ten repeated keys answer their first spend.
    expect(new Set(spent).size).toBe(38);
    expect((await c.balance()).body.balance).toBe(0);
    const ledger = (await c.ledger('?limit=100')).body.data;
    expect(ledger.filter((e: { type: string }) => e.type === 'spend')).toHaveLength(40);
    expect(new Set(ledger.map((e: { balance_after: number }) => e.balance_after)).size).toBe(ledger.length);
  });

  it('writes the spends of a batch that the ledger allows and refuses the rest, each with its own answer', async () => {
    const c = await customer();
    await c.grant({ amount: 10 });
    const store = replica();
    const answers = await Promise.all([
      spendOn(store, c, 4, 'a'),
      spendOn(store, c, 8, 'b'),
      spendOn(store, c, 4, 'a'),
      spendOn(store, c, 5, 'a'),
      spendOn(store, c, 6, 'c'),
    ]);
    expect(answers).toEqual([
      { spend: expect.objectContaining({ amount: 4, balance_after: 6 }) },
      { refused: 'insufficient_credits' },
      { spend: expect.objectContaining({ amount: 4, balance_after: 6 }) },
      { refused: 'idempotency_key_mismatch' },
      { spend: expect.objectContaining({ amount: 6, balance_after: 0 }) },
    ]);
    expect(amounts((await c.ledger()).body.data)).toEqual(['spend:-6', 'spend:-4', 'grant:10']);
    // Another tenant's customer in a batch is that spend's 404 alone.
    const stranger = { org: newOrg(), id: c.id };
    const mixed = await Promise.all([spendOn(store, stranger, 1, 'x'), spendOn(store, c, 1, 'y')]);
    expect(mixed).toEqual([{ refused: 'resource_not_found' }, { refused: 'insufficient_credits' }]);
    const grants = (await c.balance()).body.grants;
    expect(grants).toEqual([]);
  });

  it('decides on what another writer recorded since the ledger was remembered', async () => {
    const c = await customer();
    await c.grant({ amount: 5 });
    const store = replica();
    expect(await spendOn(store, c, 5, 'first')).toMatchObject({ spend: { balance_after: 0 } });
    // A grant through the API (not this writer): the remembered ledger still says 0.
    await c.grant({ amount: 7 });
    expect(await spendOn(store, c, 7, 'second')).toMatchObject({ spend: { balance_after: 0 } });
    expect(await spendOn(store, c, 1, 'third')).toEqual({ refused: 'insufficient_credits' });
  });
});

describe('the low-balance threshold', () => {
  const settingsOf = (org: string, body?: unknown, environment = 'sandbox') =>
    call(body === undefined ? 'GET' : 'PATCH', `/admin/billing_settings?environment=${environment}`, admin(org), body);

  it('is set through the billing settings, whole credits from 1 or null, and refused otherwise with 422', async () => {
    const org = newOrg();
    expect((await settingsOf(org)).body.credits_low_balance_threshold).toBeNull();
    for (const bad of [0, -5, 1.5, '10', true, 1_000_000_001]) {
      const res = await settingsOf(org, { credits_low_balance_threshold: bad });
      expect([bad, res.status, res.body.error.code]).toEqual([bad, 422, 'validation_error']);
      expect(res.body.error.details[0]).toMatchObject({ path: 'credits_low_balance_threshold' });
    }
    expect((await settingsOf(org)).body).toMatchObject({ credits_low_balance_threshold: null, updated_at: null });
    const set = await settingsOf(org, { credits_low_balance_threshold: 50 });
    expect([set.status, set.body.credits_low_balance_threshold]).toEqual([200, 50]);
    expect((await settingsOf(org, { dunning: { retry_days: [2] } })).body.credits_low_balance_threshold).toBe(50);
    expect((await settingsOf(org, undefined, 'production')).body.credits_low_balance_threshold).toBeNull();
    const off = await settingsOf(org, { credits_low_balance_threshold: null });
    expect([off.status, off.body.credits_low_balance_threshold]).toEqual([200, null]);
  });

  it('records CreditsLowBalance once, with the spend that crosses it, and every change with its ledger entry', async () => {
    const c = await customer();
    await settingsOf(c.org, { credits_low_balance_threshold: 50 });
    await c.grant({ amount: 100 });
    for (const amount of [50, 1, 1]) expect((await c.spend(amount)).status).toBe(200);

    const lows = (await eventsOf(running, 'CreditsLowBalance', c.org)).map((row) => row.data);
    expect(lows).toEqual([expect.objectContaining({ customer_id: c.id, balance: 49, threshold: 50 })]);
    const ledger = (await c.ledger()).body.data;
    expect(ledger.map((e: { balance_after: number }) => e.balance_after)).toEqual([48, 49, 50, 100]);
    expect(lows[0].object).toEqual(ledger[1]);
    const spends = (await eventsOf(running, 'CreditsSpent', c.org)).map((row) => row.data);
    expect(spends.map((d) => [d.object, d.balance])).toEqual([
      [ledger[2], 50],
      [ledger[1], 49],
      [ledger[0], 48],
    ]);
  });
});

describe('the overdraft limit', () => {
  const settingsOf = (org: string, body?: unknown, environment = 'sandbox') =>
    call(body === undefined ? 'GET' : 'PATCH', `/admin/billing_settings?environment=${environment}`, admin(org), body);

  it('is set through the billing settings, whole credits from 0, 0 by default, and refused otherwise with 422', async () => {
    const org = newOrg();
    expect((await settingsOf(org)).body.credits_overdraft_limit).toBe(0);
    for (const bad of [-1, 1.5, '10', null, 1_000_000_001]) {
      const res = await settingsOf(org, { credits_overdraft_limit: bad });
      expect([bad, res.status, res.body.error.details[0].path]).toEqual([bad, 422, 'credits_overdraft_limit']);
    }
    const set = await settingsOf(org, { credits_overdraft_limit: 25 });
    expect([set.status, set.body.credits_overdraft_limit]).toEqual([200, 25]);
    expect((await settingsOf(org, undefined, 'production')).body.credits_overdraft_limit).toBe(0);
  });

  it('lets 50 concurrent spends take the balance down to minus the limit and never below', async () => {
    const c = await customer();
    expect((await settingsOf(c.org, { credits_overdraft_limit: 10 })).status).toBe(200);
    expect((await c.grant({ amount: 30 })).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => c.spend(1, `burst-${i}`)));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(40);
    expect(statuses.filter((s) => s === 402)).toHaveLength(10);
    const spent = answers.filter((a) => a.status === 200);
    expect(Math.min(...spent.map((a) => a.body.balance))).toBe(-10);
    expect((await c.balance()).body).toMatchObject({ balance: -10, grants: [] });
    const refused = await c.spend(1, 'one-more');
    expect([refused.status, refused.body.error.code, refused.body.error.details[0].balance]).toEqual([
      402,
      'insufficient_credits',
      -10,
    ]);
    const more = await Promise.all(Array.from({ length: 10 }, (_, i) => c.spend(1, `again-${i}`)));
    expect(more.map((a) => a.status)).toEqual(Array(10).fill(402));
    const ledger = await c.ledger('?limit=100');
    expect(ledger.body.data.filter((e: { type: string }) => e.type === 'spend')).toHaveLength(40);
    expect(Math.min(...ledger.body.data.map((e: { balance_after: number }) => e.balance_after))).toBe(-10);
  });

  it('repays a debt from the next grant first, and takes back nothing while below zero', async () => {
    const c = await customer();
    await settingsOf(c.org, { credits_overdraft_limit: 50 });
    await c.grant({ amount: 10 });
    expect((await c.spend(40, 'big')).body.balance).toBe(-30);
    const takeBack = await c.adjust(1);
    expect([takeBack.status, takeBack.body.error.code]).toEqual([402, 'insufficient_credits']);
    const small = await c.grant({ amount: 20 });
    expect([small.status, small.body.remaining]).toEqual([201, 0]);
    expect((await c.balance()).body).toMatchObject({ balance: -10, grants: [] });
    const big = await c.grant({ amount: 100 });
    expect([big.status, big.body.remaining]).toEqual([201, 90]);
    expect((await c.balance()).body).toMatchObject({ balance: 90, grants: [{ id: big.body.id, remaining: 90 }] });
    expect((await c.spend(90, 'rest')).body.balance).toBe(0);
    const over = await c.adjust(1);
    expect(over.status).toBe(402);
  });
});
