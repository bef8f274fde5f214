import { CHECKOUT_TOPIC, WebhookEvent, newId, webhookEventId } from '@billing/contracts';
import { startServiceForTest, type ServiceUnderTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { notificationsService, schedulerOf } from '../src';
import { type Receiver, client, completedSession, envelope, newOrg, publish, startReceiver, verified } from './helpers';

jest.setTimeout(60000);

describe('webhook delivery', () => {
  let running: ServiceUnderTest;
  let receiver: Receiver;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const api = client(() => running);
  const scheduler = () => schedulerOf(running.service.context)!;

  beforeAll(async () => {
    receiver = await startReceiver();
    running = await startServiceForTest(notificationsService, {
      now: () => new Date(clock),
      config: {
        WEBHOOK_POLL_MS: '25',
        WEBHOOK_TIMEOUT_MS: '5000',
        WEBHOOK_CONCURRENCY: '4',
        WEBHOOK_CONCURRENCY_PER_ENDPOINT: '2',
        WEBHOOK_CONCURRENCY_PER_ORGANIZATION: '3',
        // The receiver is on 127.0.0.1: the embedded default's setting, made explicit.
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox',
      },
    });
  });
  afterAll(async () => {
    await running.stop();
    await receiver.close();
  });

  const endpoint = async (org: string, path: string, events: string[], extra: Record<string, unknown> = {}) => {
    const created = await api.admin(org, 'POST', '/webhook_endpoints', {
      environment: 'SANDBOX',
      url: receiver.url(path),
      events,
      ...extra,
    });
    if (created.status !== 201) throw new Error(JSON.stringify(created.body));
    return created.body as { id: string; secret: string };
  };
  const completed = (org: string, environment: 'SANDBOX' | 'PRODUCTION' = 'SANDBOX') => {
    const session = completedSession({ livemode: environment === 'PRODUCTION' });
    return envelope('checkout.completed', org, { session_id: session.id, object: session }, environment);
  };
  /** Advances the injected clock and lets the scheduler send whatever became due. */
  const advance = async (ms: number) => {
    clock += ms;
    await scheduler().idle();
  };
  const deliveriesOf = async (org: string, endpointId: string) =>
    (await api.admin(org, 'GET', `/webhook_endpoints/${endpointId}/deliveries`)).body.data as any[];

  it('sends a signed checkout.completed that the standard library verifies', async () => {
    const org = newOrg();
    const hook = await endpoint(org, '/signed', ['checkout.completed']);
    const event = completed(org);
    await publish(running, CHECKOUT_TOPIC, event);
    const [request] = await eventually(() => {
      const got = receiver.at('/signed');
      expect(got).toHaveLength(1);
      return got;
    });
    const payload = verified(hook.secret, request!) as WebhookEvent;
    expect(WebhookEvent.parse(payload)).toEqual(payload);
    const session = event.data.object as { id: string; metadata: Record<string, string> };
    expect(payload).toEqual({
      id: webhookEventId('checkout.completed', session.id, event.occurred_at),
      type: 'checkout.completed',
      created_at: event.occurred_at,
      livemode: false,
      data: { object: session },
    });
    expect(payload.data.object.metadata).toMatchObject({ ref: 'newsletter', utm_source: 'mail' });
    expect(request!.headers['webhook-id']).toBe(payload.id);
    expect(request!.headers['content-type']).toBe('application/json');
    // A tampered body or another secret fails verification.
    expect(() => verified(hook.secret, { ...request!, body: request!.body.replace('299', '1') })).toThrow();
    const other = await endpoint(org, '/unused', ['invoice.paid']);
    expect(() => verified(other.secret, request!)).toThrow();

    await eventually(async () => {
      const [delivery] = await deliveriesOf(org, hook.id);
      expect(delivery).toMatchObject({
        object: 'webhook_delivery',
        event_id: payload.id,
        event_type: 'checkout.completed',
        status: 'SUCCEEDED',
        attempt_count: 1,
        next_attempt_at: null,
        attempts: [{ attempt: 1, status: 'succeeded', response_status: 200, error: null }],
      });
    });
  });

  it('pages the delivery log newest first with starting_after, and refuses an unknown cursor', async () => {
    const org = newOrg();
    const hook = await endpoint(org, '/paged', ['checkout.completed']);
    for (let i = 0; i < 3; i++) await publish(running, CHECKOUT_TOPIC, completed(org));
    await eventually(async () => expect(await deliveriesOf(org, hook.id)).toHaveLength(3));
    const all = (await deliveriesOf(org, hook.id)).map((d) => d.id);
    const log = `/webhook_endpoints/${hook.id}/deliveries`;
    const first = await api.admin(org, 'GET', `${log}?limit=2`);
    expect([first.body.data.map((d: any) => d.id), first.body.has_more]).toEqual([all.slice(0, 2), true]);
    const second = await api.admin(org, 'GET', `${log}?limit=2&starting_after=${all[1]}`);
    expect([second.body.data.map((d: any) => d.id), second.body.has_more]).toEqual([all.slice(2), false]);
    const unknown = await api.admin(org, 'GET', `${log}?starting_after=whd_missing`);
    expect([unknown.status, unknown.body.error.details[0].code]).toEqual([400, 'unknown_cursor']);
    // Another organization's delivery is no cursor here.
    expect((await api.admin(newOrg(), 'GET', `/webhook_events/x/deliveries?starting_after=${all[0]}`)).status).toBe(
      400,
    );
  });

  it('reaches only active endpoints of the organization and environment that subscribe to the type', async () => {
    const org = newOrg();
    const paths = ['/iso-a', '/iso-b', '/iso-c', '/iso-d', '/iso-e', '/iso-f'];
    const [, , , d] = [
      await endpoint(org, paths[0]!, ['checkout.completed']),
      await endpoint(org, paths[1]!, ['invoice.paid']),
      await endpoint(org, paths[2]!, ['*'], { is_active: false }),
      await endpoint(org, paths[3]!, ['checkout.completed'], {
        environment: 'PRODUCTION',
        // Production may not target loopback; `.example` names never resolve.
        url: `https://hooks.shop.example${paths[3]!}`,
      }),
      await endpoint(newOrg(), paths[4]!, ['*']),
      await endpoint(org, paths[5]!, ['*']),
    ];
    const sandbox = completed(org);
    const production = completed(org, 'PRODUCTION');
    const internal = { ...completed(org), type: 'CheckoutSessionCompleted' };
    const sentinel = envelope('promotion_code.redeemed', org, {
      object: {
        id: newId('redemption'),
        promotion_code_id: 'promo_x',
        customer_id: null,
        order_id: null,
        discount_amount: 10,
        status: 'ACTIVE',
        redeemed_at: new Date(clock).toISOString(),
      },
    });
    // One key keeps them in order: once the sentinel is scheduled, so are the others.
    for (const e of [sandbox, production, internal, sentinel]) e.stream = `order-${org}`;
    await publish(running, CHECKOUT_TOPIC, sandbox, production, internal, sentinel);
    await eventually(() => expect(receiver.at('/iso-f')).toHaveLength(2));
    await scheduler().idle();

    expect(receiver.at('/iso-a').map((r) => JSON.parse(r.body).data.object.id)).toEqual([
      (sandbox.data.object as { id: string }).id,
    ]);
    expect(
      receiver
        .at('/iso-f')
        .map((r) => JSON.parse(r.body).type)
        .sort(),
    ).toEqual(['checkout.completed', 'promotion_code.redeemed']);
    for (const path of ['/iso-b', '/iso-c', '/iso-e']) expect(receiver.at(path)).toEqual([]);
    // The production endpoint's name does not resolve: one failed attempt.
    const productionDeliveries = await deliveriesOf(org, d!.id);
    const productionSession = (production.data.object as { id: string }).id;
    expect(productionDeliveries).toEqual([
      expect.objectContaining({
        event_id: webhookEventId('checkout.completed', productionSession, production.occurred_at),
        livemode: true,
      }),
    ]);
    expect(JSON.parse(receiver.at('/iso-a')[0]!.body).livemode).toBe(false);
  });

  it('sends one event id once per endpoint within an hour', async () => {
    const org = newOrg();
    await endpoint(org, '/dedupe', ['checkout.completed']);
    const first = completed(org);
    // The same change published twice (a relay retry or a second producer), under new envelope ids.
    const again = { ...first, id: crypto.randomUUID() };
    const sentinel = completed(org);
    for (const e of [first, again, sentinel]) e.stream = `order-${org}`;
    await publish(running, CHECKOUT_TOPIC, first, again, sentinel);
    await eventually(() => expect(receiver.at('/dedupe')).toHaveLength(2));
    await scheduler().idle();
    const ids = receiver.at('/dedupe').map((r) => r.headers['webhook-id']);
    expect(new Set(ids).size).toBe(2);
    // Two requests of one endpoint may be in flight at once: arrival order is not promised.
    const eventId = webhookEventId('checkout.completed', (first.data.object as { id: string }).id, first.occurred_at);
    expect(ids).toContain(eventId);
    expect((await api.admin(org, 'GET', `/webhook_events/${eventId}/deliveries`)).body.data).toHaveLength(1);

    clock += 59 * 60_000;
    await publish(running, CHECKOUT_TOPIC, { ...first, id: crypto.randomUUID() });
    const later = completed(org);
    later.stream = first.stream;
    await publish(running, CHECKOUT_TOPIC, later);
    await eventually(() => expect(receiver.at('/dedupe')).toHaveLength(3));
    await scheduler().idle();
    expect(receiver.at('/dedupe').filter((r) => r.headers['webhook-id'] === eventId)).toHaveLength(1);

    clock += 2 * 60_000;
    await publish(running, CHECKOUT_TOPIC, { ...first, id: crypto.randomUUID() });
    await eventually(() => expect(receiver.at('/dedupe')).toHaveLength(4));
    expect(receiver.at('/dedupe').filter((r) => r.headers['webhook-id'] === eventId)).toHaveLength(2);
  });

  it('cancels the pending deliveries of a deleted endpoint: no more retries, CANCELED in the log', async () => {
    const org = newOrg();
    const hook = await endpoint(org, '/deleted', ['checkout.completed']);
    const other = await endpoint(org, '/kept', ['checkout.completed']);
    receiver.answer('/deleted', 503);
    receiver.answer('/kept', 503);
    const event = completed(org);
    await publish(running, CHECKOUT_TOPIC, event);
    await eventually(() => expect(receiver.at('/deleted')).toHaveLength(1));
    await eventually(() => expect(receiver.at('/kept')).toHaveLength(1));
    await scheduler().idle();

    expect((await api.admin(org, 'DELETE', `/webhook_endpoints/${hook.id}`)).status).toBe(200);
    receiver.answer('/deleted', 200);
    receiver.answer('/kept', 200);
    await advance(60_000);
    await eventually(() => expect(receiver.at('/kept')).toHaveLength(2));
    await advance(60 * 60_000);
    expect(receiver.at('/deleted')).toHaveLength(1);

    const eventId = JSON.parse(receiver.at('/deleted')[0]!.body).id;
    const log = (await api.admin(org, 'GET', `/webhook_events/${eventId}/deliveries`)).body.data as any[];
    expect(log.find((d) => d.endpoint_id === hook.id)).toMatchObject({
      status: 'CANCELED',
      next_attempt_at: null,
      attempts: [expect.objectContaining({ attempt: 1, response_status: 503 })],
    });
    expect(log.find((d) => d.endpoint_id === other.id)).toMatchObject({ status: 'SUCCEEDED', attempt_count: 2 });
    const canceled = log.find((d) => d.endpoint_id === hook.id);
    expect((await api.admin(org, 'POST', `/webhook_deliveries/${canceled.id}/replay`)).status).toBe(409);
  });

  it('retries at 1, 2, 4, 8 and 16 minutes by the injected clock, then fails; a replay sends again', async () => {
    const org = newOrg();
    const hook = await endpoint(org, '/flaky', ['checkout.completed']);
    receiver.answer('/flaky', 500);
    const start = clock;
    await publish(running, CHECKOUT_TOPIC, completed(org));
    await eventually(async () => expect((await deliveriesOf(org, hook.id))[0]?.attempt_count).toBe(1));
    const pending = (await deliveriesOf(org, hook.id))[0];
    expect(pending).toMatchObject({ status: 'PENDING', next_attempt_at: new Date(start + 60_000).toISOString() });

    const times = [start];
    for (const minutes of [1, 2, 4, 8, 16]) {
      await advance(minutes * 60_000 - 1000);
      expect(receiver.at('/flaky')).toHaveLength(times.length);
      await advance(1000);
      times.push(clock);
      await eventually(() => expect(receiver.at('/flaky')).toHaveLength(times.length));
    }
    await eventually(async () => expect((await deliveriesOf(org, hook.id))[0]?.status).toBe('FAILED'));
    await advance(60 * 60_000);
    expect(receiver.at('/flaky')).toHaveLength(6);

    const [failed] = await deliveriesOf(org, hook.id);
    expect(failed).toMatchObject({ status: 'FAILED', attempt_count: 6, next_attempt_at: null });
    expect(failed.attempts.map((a: any) => Date.parse(a.attempted_at))).toEqual(times);
    expect(failed.attempts.every((a: any) => a.status === 'failed' && a.response_status === 500)).toBe(true);
    expect(failed.attempts[0]).toMatchObject({ error: 'HTTP 500', duration_ms: expect.any(Number) });
    // Every attempt carries the same event id and a valid signature.
    const requests = receiver.at('/flaky');
    expect(new Set(requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const request of requests) verified(hook.secret, request);

    receiver.answer('/flaky', 204);
    const replayed = await api.admin(org, 'POST', `/webhook_deliveries/${failed.id}/replay`);
    expect(replayed.status).toBe(202);
    await eventually(async () => expect((await deliveriesOf(org, hook.id))[0]?.status).toBe('SUCCEEDED'));
    expect(receiver.at('/flaky')).toHaveLength(7);
    expect((await deliveriesOf(org, hook.id))[0].attempts.at(-1)).toMatchObject({ attempt: 7, response_status: 204 });
    expect((await api.admin(org, 'POST', `/webhook_deliveries/${failed.id}/replay`)).status).toBe(409);
    expect((await api.admin(newOrg(), 'POST', `/webhook_deliveries/${failed.id}/replay`)).status).toBe(404);
  });

  it('does not let a hanging endpoint hold up the others', async () => {
    const org = newOrg();
    const slow = await endpoint(org, '/slow', ['checkout.expired']);
    await endpoint(org, '/fast', ['checkout.completed']);
    receiver.answer('/slow', 'hold');
    const expired = Array.from({ length: 6 }, () => {
      const session = completedSession({ status: 'EXPIRED', completed_at: null });
      return envelope('checkout.expired', org, { session_id: session.id, redemption_id: null, object: session });
    });
    await publish(running, CHECKOUT_TOPIC, ...expired);
    await eventually(() => expect(receiver.at('/slow').length).toBeGreaterThanOrEqual(2));
    // Six slow deliveries are due first; the per-endpoint bound (2 of 4 slots) leaves room for the others.
    await publish(running, CHECKOUT_TOPIC, ...Array.from({ length: 6 }, () => completed(org)));
    await eventually(() => expect(receiver.at('/fast')).toHaveLength(6));
    expect(receiver.at('/slow')).toHaveLength(2);
    expect((await deliveriesOf(org, slow.id)).flatMap((d) => d.attempts)).toEqual([]);

    receiver.release('/slow', 200);
    await eventually(async () => {
      const deliveries = await deliveriesOf(org, slow.id);
      expect(deliveries.map((d) => d.status)).toEqual(Array(6).fill('SUCCEEDED'));
    });
  });

  it("does not let one organization's hanging endpoints hold up another organization", async () => {
    const slowOrg = newOrg();
    const hanging = ['/hang-1', '/hang-2'];
    for (const path of hanging) {
      await endpoint(slowOrg, path, ['checkout.expired']);
      receiver.answer(path, 'hold');
    }
    const expired = Array.from({ length: 6 }, () => {
      const session = completedSession({ status: 'EXPIRED', completed_at: null });
      return envelope('checkout.expired', slowOrg, { session_id: session.id, redemption_id: null, object: session });
    });
    await publish(running, CHECKOUT_TOPIC, ...expired);
    // Two endpoints at 2 each could take all 4 slots; the organization's bound stops it at 3.
    await eventually(() => expect(receiver.at('/hang-1').length + receiver.at('/hang-2').length).toBe(3));

    const otherOrg = newOrg();
    await endpoint(otherOrg, '/other-org', ['checkout.completed']);
    await publish(running, CHECKOUT_TOPIC, ...Array.from({ length: 4 }, () => completed(otherOrg)));
    await eventually(() => expect(receiver.at('/other-org')).toHaveLength(4));
    expect(receiver.at('/hang-1').length + receiver.at('/hang-2').length).toBe(3);

    for (const path of hanging) receiver.release(path, 200);
    await eventually(() => expect(receiver.at('/hang-1').length + receiver.at('/hang-2').length).toBe(12));
  });

  it('gives up an attempt after the timeout and retries it', async () => {
    const org = newOrg();
    const dead = await endpoint(org, '/dead', ['checkout.completed']);
    receiver.answer('/dead', 'hang');
    const start = clock;
    await publish(running, CHECKOUT_TOPIC, completed(org));
    await eventually(async () => {
      const [delivery] = await deliveriesOf(org, dead.id);
      expect(delivery).toMatchObject({
        status: 'PENDING',
        next_attempt_at: new Date(start + 60_000).toISOString(),
        attempts: [{ status: 'failed', response_status: null, error: 'timeout after 5000 ms' }],
      });
      expect(delivery.attempts[0].duration_ms).toBeGreaterThanOrEqual(4900);
    }, 20000);
    await api.admin(org, 'PATCH', `/webhook_endpoints/${dead.id}`, { is_active: false });
  });
});
