import { CHECKOUT_TOPIC } from '@billing/contracts';
import {
  type Infrastructure,
  type ServiceUnderTest,
  createInfrastructure,
  startServiceForTest,
} from '@billing/runtime';
import { DedicatedKafkaBroker, describeWithServer, eventually } from '@billing/testing';
import { notificationsService, schedulerOf } from '../src';
import { type Receiver, client, completedSession, envelope, newOrg, publish, startReceiver, verified } from './helpers';

jest.setTimeout(240_000);

/**
 * The schedule lives in PostgreSQL and consumed offsets are committed after the handler: a
 * broker that goes away mid-schedule and comes back loses and duplicates nothing. The test
 * restarts a broker of its own; the shared one stays up for the other suites.
 */
describeWithServer('KAFKA_BROKERS', 'webhook delivery across a Kafka restart', () => {
  const broker = new DedicatedKafkaBroker(Number(process.env.KAFKA_RESTART_TEST_PORT ?? 19092));
  let infrastructure: Infrastructure;
  let running: ServiceUnderTest;
  let receiver: Receiver;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const api = client(() => running);

  beforeAll(async () => {
    await broker.start(true);
    infrastructure = await createInfrastructure({
      clientId: 'notifications-kafka-restart-test',
      dataDir: 'memory',
      env: { DATABASE_URL: process.env.DATABASE_URL, KAFKA_BROKERS: broker.brokers },
    });
    receiver = await startReceiver();
    running = await startServiceForTest(notificationsService, {
      infrastructure,
      now: () => new Date(clock),
      // The receiver is on 127.0.0.1: the embedded default's setting, made explicit.
      config: { WEBHOOK_POLL_MS: '25', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
  });
  afterAll(async () => {
    await running?.stop();
    await infrastructure?.close();
    await receiver?.close();
    await broker.stop(true);
  });

  it('retries while the broker is down, then consumes on from where it stopped', async () => {
    const org = newOrg();
    const hook = (
      await api.admin(org, 'POST', '/webhook_endpoints', {
        environment: 'SANDBOX',
        url: receiver.url('/kafka'),
        events: ['checkout.completed'],
      })
    ).body;
    receiver.answer('/kafka', 503);
    const first = completedSession();
    await publish(
      running,
      CHECKOUT_TOPIC,
      envelope('checkout.completed', org, { session_id: first.id, object: first }),
    );
    await eventually(() => expect(receiver.at('/kafka')).toHaveLength(1), 60_000);
    await schedulerOf(running.service.context)!.idle();

    await broker.stop();
    // The retry is due a minute later and comes from PostgreSQL: Kafka being down changes nothing.
    receiver.answer('/kafka', 200);
    clock += 60_000;
    await eventually(() => expect(receiver.at('/kafka')).toHaveLength(2));

    await broker.start();
    // The consumer and the producer reconnect by themselves; the two new events are both sent.
    const [second, third] = [completedSession(), completedSession()];
    const next = [second, third].map((s) => ({
      ...envelope('checkout.completed', org, { session_id: s.id, object: s }),
      stream: `order-${org}`,
    }));
    await publish(running, CHECKOUT_TOPIC, ...next);
    await eventually(() => expect(receiver.at('/kafka')).toHaveLength(4), 120_000);
    await schedulerOf(running.service.context)!.idle();

    const sent = receiver.at('/kafka').map((r) => verified(hook.secret, r).data.object.id);
    // Two requests of one endpoint may be in flight at once: their arrival order is not promised.
    expect(sent.slice(0, 2)).toEqual([first.id, first.id]);
    expect(sent.slice(2).sort()).toEqual([second.id, third.id].sort());
    const deliveries = (await api.admin(org, 'GET', `/webhook_endpoints/${hook.id}/deliveries`)).body.data;
    expect(deliveries.map((d: { status: string }) => d.status)).toEqual(['SUCCEEDED', 'SUCCEEDED', 'SUCCEEDED']);
  });
});
