import { randomBytes } from 'node:crypto';
import { CHECKOUT_TOPIC } from '@billing/contracts';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually, serverUrl } from '@billing/testing';
import { notificationsService, schedulerOf } from '../src';
import { type Claimed, claimDue, releaseLeases } from '../src/deliveries/claim';
import { type Receiver, client, completedSession, envelope, newOrg, publish, startReceiver } from './helpers';

jest.setTimeout(60000);

/**
 * The scheduler claims due deliveries many at once into a local queue, under a lease: 2
 * requests per endpoint, 3 per organization and 4 in all, with 3 rounds of each claimed ahead.
 */
describe('claiming due webhook deliveries', () => {
  let infrastructure: Infrastructure;
  let running: ServiceUnderTest;
  let second: ServiceUnderTest | undefined;
  let secondInfrastructure: Infrastructure | undefined;
  let receiver: Receiver;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const schema = `notifications_${randomBytes(5).toString('hex')}`;
  const api = client(() => running);
  const start = (on: Infrastructure) =>
    startServiceForTest(notificationsService, {
      infrastructure: on,
      schema,
      now: () => new Date(clock),
      config: {
        WEBHOOK_POLL_MS: '25',
        WEBHOOK_TIMEOUT_MS: '5000',
        WEBHOOK_CONCURRENCY: '4',
        WEBHOOK_CONCURRENCY_PER_ENDPOINT: '2',
        WEBHOOK_CONCURRENCY_PER_ORGANIZATION: '3',
        WEBHOOK_CLAIM_AHEAD: '3',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox',
      },
    });
  /**
   * A second notifications process on the same database. On PostgreSQL a pool of its own, as a
   * second process has; PGlite lives in one process, so there the second shares the first's.
   */
  const startSecond = async () => {
    if (serverUrl('DATABASE_URL')) secondInfrastructure = await testInfrastructure('notifications-claims-second');
    return start(secondInfrastructure ?? infrastructure);
  };
  const scheduler = () => schedulerOf(running.service.context)!;
  const store = () => running.service.context.store;

  beforeAll(async () => {
    infrastructure = await testInfrastructure('notifications-claims-test');
    receiver = await startReceiver();
    running = await start(infrastructure);
  });
  afterAll(async () => {
    await second?.service.shutdown();
    await secondInfrastructure?.close();
    await running.stop();
    await infrastructure.close();
    await receiver.close();
  });

  const endpoint = async (org: string, path: string) => {
    const created = await api.admin(org, 'POST', '/webhook_endpoints', {
      environment: 'SANDBOX',
      url: receiver.url(path),
      events: ['checkout.completed'],
    });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    return created.body as { id: string };
  };
  const completed = (org: string) => {
    const session = completedSession();
    return envelope('checkout.completed', org, { session_id: session.id, object: session });
  };
  const publishCompleted = (org: string, count: number) =>
    publish(running, CHECKOUT_TOPIC, ...Array.from({ length: count }, () => completed(org)));
  const deliveriesOf = async (org: string, endpointId: string) =>
    (await api.admin(org, 'GET', `/webhook_endpoints/${endpointId}/deliveries?limit=100`)).body.data as any[];
  /** Pending deliveries of these endpoints under a lease that has not expired by the clock. */
  const leased = async (endpointIds: string[]) => {
    const { rows } = await store().database.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${schema}.webhook_deliveries
       WHERE endpoint_id = ANY($1) AND status = 'PENDING' AND lease_until > $2`,
      [endpointIds, new Date(clock).toISOString()],
    );
    return rows[0]!.n;
  };
  const arrived = (...paths: string[]) => paths.reduce((n, path) => n + receiver.at(path).length, 0);
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  const advance = async (ms: number) => {
    clock += ms;
    await scheduler().idle();
  };
  /** Deliveries of `count` events that failed once and are due again in a minute. */
  const failedOnce = async (path: string, count: number) => {
    const org = newOrg();
    const hook = await endpoint(org, path);
    receiver.answer(path, 500);
    await publishCompleted(org, count);
    await eventually(async () => {
      const deliveries = await deliveriesOf(org, hook.id);
      expect(deliveries.map((d) => d.attempt_count)).toEqual(Array(count).fill(1));
    });
    await scheduler().idle();
    return { org, hook, ids: (await deliveriesOf(org, hook.id)).map((d) => d.id as string) };
  };

  it("claims an endpoint's due deliveries ahead, and sends at most its bound at a time", async () => {
    const org = newOrg();
    const hook = await endpoint(org, '/many');
    receiver.answer('/many', 'hold');
    await publishCompleted(org, 10);

    // 2 per endpoint, 3 rounds ahead: 6 claimed, 2 requests out.
    await eventually(async () => expect(await leased([hook.id])).toBe(6));
    await eventually(() => expect(receiver.at('/many')).toHaveLength(2));
    await pause(300);
    expect(receiver.at('/many')).toHaveLength(2);
    expect(await leased([hook.id])).toBe(6);

    receiver.release('/many', 200);
    await eventually(() => expect(receiver.at('/many')).toHaveLength(10));
    await scheduler().idle();
    expect(new Set(receiver.at('/many').map((r) => r.headers['webhook-id'])).size).toBe(10);
    expect((await deliveriesOf(org, hook.id)).map((d) => d.status)).toEqual(Array(10).fill('SUCCEEDED'));
  });

  it('sends none of its queued deliveries to an endpoint deleted or deactivated after the claim', async () => {
    const org = newOrg();
    const [deleted, paused] = [await endpoint(org, '/deleted-queued'), await endpoint(org, '/paused-queued')];
    receiver.answer('/deleted-queued', 'hold');
    receiver.answer('/paused-queued', 'hold');
    await publishCompleted(org, 4);
    // The organization's 3 requests are out, its other 5 deliveries claimed and queued.
    await eventually(async () => expect(await leased([deleted.id, paused.id])).toBe(8));
    await eventually(() => expect(arrived('/deleted-queued', '/paused-queued')).toBe(3));

    expect((await api.admin(org, 'DELETE', `/webhook_endpoints/${deleted.id}`)).status).toBe(200);
    expect((await api.admin(org, 'PATCH', `/webhook_endpoints/${paused.id}`, { is_active: false })).status).toBe(200);
    await pause(200);
    receiver.release('/deleted-queued', 200);
    receiver.release('/paused-queued', 200);
    await pause(300);
    await scheduler().idle();
    expect(arrived('/deleted-queued', '/paused-queued')).toBe(3);
    const { rows: canceled } = await store().database.query<{ status: string }>(
      `SELECT status FROM ${schema}.webhook_deliveries WHERE endpoint_id = $1`,
      [deleted.id],
    );
    expect(canceled).toEqual(Array(4).fill({ status: 'CANCELED' }));
    // The deactivated endpoint's deliveries wait, unleased, and go out once it is active again.
    const waiting = (await deliveriesOf(org, paused.id)).filter((d) => d.status === 'PENDING');
    expect(waiting.length).toBeGreaterThan(0);
    expect(await leased([paused.id])).toBe(0);
    expect((await api.admin(org, 'PATCH', `/webhook_endpoints/${paused.id}`, { is_active: true })).status).toBe(200);
    await eventually(() => expect(receiver.at('/paused-queued')).toHaveLength(4));
    await scheduler().idle();
    expect(new Set(receiver.at('/paused-queued').map((r) => r.headers['webhook-id'])).size).toBe(4);
  });

  it("does not let one organization's slow endpoints, claimed ahead, delay another organization", async () => {
    const slowOrg = newOrg();
    const slow = [await endpoint(slowOrg, '/slow-1'), await endpoint(slowOrg, '/slow-2')];
    receiver.answer('/slow-1', 'hold');
    receiver.answer('/slow-2', 'hold');
    await publishCompleted(slowOrg, 10);

    // 3 requests for the organization; 3 rounds of 3 claimed, though each endpoint could take 6.
    await eventually(() => expect(arrived('/slow-1', '/slow-2')).toBe(3));
    await eventually(async () => expect(await leased(slow.map((e) => e.id))).toBe(9));
    expect(arrived('/slow-1', '/slow-2')).toBe(3);

    const otherOrg = newOrg();
    await endpoint(otherOrg, '/quick');
    await publishCompleted(otherOrg, 5);
    await eventually(() => expect(receiver.at('/quick')).toHaveLength(5));
    expect(arrived('/slow-1', '/slow-2')).toBe(3);

    receiver.release('/slow-1', 200);
    receiver.release('/slow-2', 200);
    await eventually(() => expect(arrived('/slow-1', '/slow-2')).toBe(20));
    await scheduler().idle();
  });

  it("sends a crashed scheduler's claimed deliveries once their lease expires, not before", async () => {
    const { org, hook, ids } = await failedOnce('/crashed', 2);
    // Another process claims both retries when they fall due, then dies before sending them.
    const due = new Date(clock + 60_000);
    const crashed = await claimDue(
      store(),
      { byEndpoint: new Map(), byOrganization: new Map(), total: 0 },
      { perEndpoint: 10, perOrganization: 10, total: 10 },
      due,
      new Date(due.getTime() + 120_000),
    );
    expect(crashed.map((d) => d.id).sort()).toEqual([...ids].sort());

    receiver.answer('/crashed', 200);
    await advance(60_000);
    await advance(119_999);
    expect(receiver.at('/crashed')).toHaveLength(2);
    await advance(1);
    await eventually(() => expect(receiver.at('/crashed')).toHaveLength(4));
    await scheduler().idle();
    expect((await deliveriesOf(org, hook.id)).map((d) => [d.status, d.attempt_count])).toEqual([
      ['SUCCEEDED', 2],
      ['SUCCEEDED', 2],
    ]);
  });

  it('never lets two claims take the same delivery, and two schedulers send each delivery once', async () => {
    second = await startSecond();
    const { ids } = await failedOnce('/contended', 30);
    await schedulerOf(second.service.context)!.idle();

    // Two processes claim at the same moment, each free to take every due delivery.
    const due = new Date(clock + 60_000);
    const lease = new Date(due.getTime() + 60_000);
    const nothingHeld = () => ({ byEndpoint: new Map(), byOrganization: new Map(), total: 0 });
    const limits = { perEndpoint: 100, perOrganization: 100, total: 100 };
    const claims: Claimed[][] = await Promise.all([
      claimDue(store(), nothingHeld(), limits, due, lease),
      claimDue(second.service.context.store, nothingHeld(), limits, due, lease),
    ]);
    const [a, b] = claims.map((claimed) => claimed.map((d) => d.id));
    expect(a!.filter((id) => b!.includes(id))).toEqual([]);
    expect([...a!, ...b!].sort()).toEqual([...ids].sort());
    await releaseLeases(store(), claims.flat(), due);

    // Both schedulers find them due: each is sent once more, and recorded once.
    receiver.answer('/contended', 200);
    clock += 60_000;
    await eventually(() => expect(receiver.at('/contended')).toHaveLength(60));
    await Promise.all([scheduler().idle(), schedulerOf(second.service.context)!.idle()]);
    await pause(200);
    expect(receiver.at('/contended')).toHaveLength(60);
    const { rows } = await store().database.query<{ status: string; attempt_count: number }>(
      `SELECT status, attempt_count FROM ${schema}.webhook_deliveries WHERE id = ANY($1)`,
      [ids],
    );
    expect(rows).toEqual(Array(30).fill({ status: 'SUCCEEDED', attempt_count: 2 }));
  });

  it('gives back the leases of deliveries it claimed and had not started when it stops', async () => {
    const org = newOrg();
    const hook = await endpoint(org, '/stopping');
    receiver.answer('/stopping', 'hold');
    await publish(second!, CHECKOUT_TOPIC, ...Array.from({ length: 12 }, () => completed(org)));
    // Both schedulers hold some; 2 requests each at most are out, the rest waits in their queues.
    await eventually(async () => expect(await leased([hook.id])).toBe(12));
    const stopping = second!.service.shutdown();
    await pause(100);
    receiver.release('/stopping', 200);
    await stopping;
    second = undefined;
    // What the stopped scheduler had queued is sent by the other without waiting for its lease.
    await eventually(() => expect(receiver.at('/stopping')).toHaveLength(12));
    await scheduler().idle();
    expect((await deliveriesOf(org, hook.id)).map((d) => d.status)).toEqual(Array(12).fill('SUCCEEDED'));
  });
});
