import { billingService } from '@billing/billing';
import { checkoutService } from '@billing/checkout';
import {
  type Infrastructure,
  InternalClient,
  type ServiceUnderTest,
  startServiceForTest,
  testInfrastructure,
} from '@billing/runtime';
import { callService, caller, describeWithServer, eventually, newOrg, uniqueName } from '@billing/testing';
import { expectRenewedOncePerPeriod, monthlyPlan, publishPaidCheckouts } from '../src/renewal-fixtures';

/**
 * Issue 13, part 9: two billing engines on one PostgreSQL schema (each with its own connection
 * pool and bus client, as two processes have) race for the same renewals, through a test-clock
 * advance and through the real-time sweep, and every subscription still renews once per period:
 * one invoice, one InvoicePaid, one SubscriptionRenewed, one charge in checkout's ledger.
 * RENEWAL_RACE_SUBSCRIPTIONS sets how many subscriptions fall due at once (20 by default).
 */
const COUNT = Number(process.env.RENEWAL_RACE_SUBSCRIPTIONS ?? 20);

jest.setTimeout(180_000);

describeWithServer('DATABASE_URL', 'renewals with two billing engines on one PostgreSQL schema', () => {
  const schema = uniqueName('billing_race');
  let now = new Date('2026-01-31T10:00:00.000Z');
  let infrastructures: Infrastructure[] = [];
  let checkout: ServiceUnderTest;
  const engines: ServiceUnderTest[] = [];
  const checkoutUrls: string[] = [];
  /**
   * Charge calls to checkout (one charge, or a batch), by the base URL of the asking client:
   * engine B spells checkout's URL with an upper-case scheme (the same address once parsed),
   * so each engine's calls can be told apart, and both still reach the one checkout. Every
   * charge call waits 100 ms first, so that a renewal takes long enough for the other engine
   * to be at the same renewals whatever the machine's speed.
   */
  const chargeCalls = new Map<string, number>();
  const post = InternalClient.prototype.post;

  beforeAll(async () => {
    InternalClient.prototype.post = async function (this: InternalClient, path, body, identity) {
      const { baseUrl } = (this as unknown as { options: { baseUrl: string } }).options;
      if (path.startsWith('/internal/charges')) {
        chargeCalls.set(baseUrl, (chargeCalls.get(baseUrl) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      return post.call(this, path, body, identity);
    } as typeof post;
    infrastructures = [await testInfrastructure('billing-race-a'), await testInfrastructure('billing-race-b')];
    checkout = await startServiceForTest(checkoutService, { infrastructure: infrastructures[0] });
    // One after the other: each migrates the shared schema (idempotently) before it serves.
    for (const [i, infrastructure] of infrastructures.entries()) {
      const url = i === 0 ? checkout.service.url : checkout.service.url.replace(/^http:/, 'HTTP:');
      checkoutUrls.push(url);
      const config = { CHECKOUT_SERVICE_URL: url, BILLING_TRIAL_SWEEP_INTERVAL_MS: '20' };
      engines.push(await startServiceForTest(billingService, { infrastructure, schema, config, now: () => now }));
    }
  });
  afterAll(async () => {
    InternalClient.prototype.post = post;
    for (const engine of engines) await engine.service.shutdown();
    await checkout?.stop();
    await infrastructures[0]?.database.exec(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    for (const infrastructure of infrastructures) await infrastructure.close();
  });

  const schemas = () => ({ billing: schema, checkout: checkout.service.context.store.tables.schema });
  const database = () => infrastructures[0]!.database;
  const call = (engine: number, method: string, path: string, org: string, body?: unknown) =>
    callService(engines[engine]!.service.url, method, path, caller(org), body);

  async function subscriptions(org: string, count: number) {
    await eventually(async () => {
      const { rows } = await database().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${schema}.subscriptions WHERE organization = $1`,
        [org],
      );
      expect(rows[0]!.n).toBe(count);
    }, 60_000);
  }

  /** Charges each engine asked checkout for since `before`. */
  const chargeCallsNow = () => checkoutUrls.map((url) => chargeCalls.get(url) ?? 0);
  const callsSince = (before: number[]) => chargeCallsNow().map((n, i) => n - before[i]!);

  it('a test-clock advance run by both engines at once renews each subscription once per period', async () => {
    const org = newOrg();
    const clock = await call(0, 'POST', '/v1/test_clocks', org, { frozen_time: '2026-01-31T10:00:00Z' });
    expect(clock.status).toBe(201);
    await publishPaidCheckouts(infrastructures[0]!.bus, org, monthlyPlan(), COUNT, clock.body.id);
    await subscriptions(org, COUNT);
    const before = chargeCallsNow();

    // Engine A takes the advance and runs it; both engines' sweeps (every 20 ms) run the
    // advancing clock as well, so three runs race over the same renewals.
    const advanced = await call(0, 'POST', `/v1/test_clocks/${clock.body.id}/advance`, org, {
      frozen_time: '2026-03-01T00:00:00Z',
    });
    expect(advanced.status).toBe(200);
    await eventually(async () => {
      const read = await call(1, 'GET', `/v1/test_clocks/${clock.body.id}`, org);
      expect(read.body).toMatchObject({ status: 'ready', frozen_time: '2026-03-01T00:00:00.000Z' });
    }, 120_000);
    await expectRenewedOncePerPeriod(
      database(),
      schemas(),
      org,
      COUNT,
      ['2026-02-28T10:00:00Z'],
      '2026-03-31T10:00:00.000Z',
    );

    // A second advance, taken by engine B, over the next period end (31 March).
    const again = await call(1, 'POST', `/v1/test_clocks/${clock.body.id}/advance`, org, {
      frozen_time: '2026-04-01T00:00:00Z',
    });
    expect(again.status).toBe(200);
    await eventually(async () => {
      const read = await call(0, 'GET', `/v1/test_clocks/${clock.body.id}`, org);
      expect(read.body).toMatchObject({ status: 'ready', frozen_time: '2026-04-01T00:00:00.000Z' });
    }, 120_000);
    // Ready means done: every renewal up to the target is in place when the clock says so.
    await expectRenewedOncePerPeriod(
      database(),
      schemas(),
      org,
      COUNT,
      ['2026-02-28T10:00:00Z', '2026-03-31T10:00:00Z'],
      '2026-04-30T10:00:00.000Z',
    );
    const calls = callsSince(before);
    // Both engines charged: the race happened, and the ledger still holds one charge per invoice.
    expect(calls.every((n) => n > 0)).toBe(true);
  });

  it('the real-time sweeps of both engines renew each subscription once when their period ends', async () => {
    const org = newOrg();
    await publishPaidCheckouts(infrastructures[0]!.bus, org, monthlyPlan(), COUNT);
    await subscriptions(org, COUNT);
    const before = chargeCallsNow();

    now = new Date('2026-03-01T00:00:00.000Z'); // both engines' clock passes 28 February at once
    await eventually(async () => {
      const { rows } = await database().query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${schema}.subscriptions
         WHERE organization = $1 AND document->>'current_period_end' = '2026-03-31T10:00:00.000Z'`,
        [org],
      );
      expect(rows[0]!.n).toBe(COUNT);
    }, 120_000);
    await expectRenewedOncePerPeriod(
      database(),
      schemas(),
      org,
      COUNT,
      ['2026-02-28T10:00:00Z'],
      '2026-03-31T10:00:00.000Z',
    );
    expect(callsSince(before).every((n) => n > 0)).toBe(true);
  });
});
