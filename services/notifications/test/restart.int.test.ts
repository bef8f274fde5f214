import { CHECKOUT_TOPIC } from '@billing/contracts';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { randomBytes } from 'node:crypto';
import { notificationsService, schedulerOf } from '../src';
import { type Receiver, client, completedSession, envelope, newOrg, publish, startReceiver, verified } from './helpers';

jest.setTimeout(60000);

/** The schedule lives in PostgreSQL: a restart in the middle loses and duplicates nothing. */
describe('webhook delivery across a restart', () => {
  let infrastructure: Infrastructure;
  let running: ServiceUnderTest;
  let receiver: Receiver;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const schema = `notifications_${randomBytes(5).toString('hex')}`;
  const api = client(() => running);
  const start = () =>
    startServiceForTest(notificationsService, {
      infrastructure,
      schema,
      now: () => new Date(clock),
      // The receiver is on 127.0.0.1: the embedded default's setting, made explicit.
      config: { WEBHOOK_POLL_MS: '25', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });

  beforeAll(async () => {
    infrastructure = await testInfrastructure('notifications-restart-test');
    receiver = await startReceiver();
    running = await start();
  });
  afterAll(async () => {
    await running.stop();
    await infrastructure.close();
    await receiver.close();
  });

  it('keeps the retry schedule and sends each delivery once', async () => {
    const org = newOrg();
    const hook = (
      await api.admin(org, 'POST', '/webhook_endpoints', {
        environment: 'SANDBOX',
        url: receiver.url('/restart'),
        events: ['checkout.completed'],
      })
    ).body;
    receiver.answer('/restart', 503);
    const session = completedSession();
    const first = envelope('checkout.completed', org, { session_id: session.id, object: session });
    await publish(running, CHECKOUT_TOPIC, first);
    await eventually(() => expect(receiver.at('/restart')).toHaveLength(1));
    await schedulerOf(running.service.context)!.idle();

    await running.service.shutdown();
    // While the service is down: the endpoint recovers, a new event arrives, time passes.
    receiver.answer('/restart', 200);
    const other = completedSession();
    const second = envelope('checkout.completed', org, { session_id: other.id, object: other });
    await publish(running, CHECKOUT_TOPIC, second);
    clock += 60_000;
    running = await start();

    await eventually(() => expect(receiver.at('/restart')).toHaveLength(3));
    // The same envelopes again (a relay that republishes after a crash): the inbox drops them.
    // One key keeps them in order, so once the sentinel is sent the others were handled.
    const sentinelSession = completedSession();
    const sentinel = envelope('checkout.completed', org, { session_id: sentinelSession.id, object: sentinelSession });
    for (const e of [first, second, sentinel]) e.stream = `order-${org}`;
    await publish(running, CHECKOUT_TOPIC, first, second, sentinel);
    await eventually(() => expect(receiver.at('/restart')).toHaveLength(4));
    clock += 60 * 60_000;
    await schedulerOf(running.service.context)!.idle();

    const sent = receiver.at('/restart').map((r) => verified(hook.secret, r).data.object.id);
    expect(sent.slice(0, 1)).toEqual([session.id]);
    expect(sent.slice(1, 3).sort()).toEqual([session.id, other.id].sort());
    expect(sent[3]).toBe(sentinelSession.id);
    const deliveries = (await api.admin(org, 'GET', `/webhook_endpoints/${hook.id}/deliveries`)).body.data;
    expect(deliveries).toHaveLength(3);
    const byObject = (id: string) =>
      deliveries.find((d: any) =>
        receiver.at('/restart').some((r) => r.headers['webhook-id'] === d.event_id && r.body.includes(id)),
      );
    expect(byObject(session.id)).toMatchObject({
      status: 'SUCCEEDED',
      attempts: [{ response_status: 503 }, { response_status: 200 }],
    });
    expect(byObject(other.id)).toMatchObject({ status: 'SUCCEEDED', attempts: [{ response_status: 200 }] });
  });
});
