import { randomBytes, randomUUID } from 'node:crypto';
import { type Database } from '@billing/eventstore';
import { describeWithServer, eventually } from '@billing/testing';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';
import { clientOf, jsonApi, plan } from '../src/platform';
import {
  Replica,
  type ServiceName,
  type TopicMessage,
  deleteTopicsWithPrefix,
  freePort,
  freshDatabase,
  readTopics,
  startRoundRobin,
} from '../src/replica-topology';

/**
 * Issue 26: several replicas, as a tested topology. Every service runs as its own OS process
 * (`node services/<name>/dist/main.js`) on PostgreSQL and Kafka: TWO replicas of checkout,
 * billing and notifications, each pair behind a round-robin proxy (as a Kubernetes service
 * would put them; services call each other through those proxies too), and ONE catalog,
 * promotions and gateway. A run has a database and a Kafka topic prefix of its own.
 *
 * Buyers pay checkouts through the gateway (half of them on one test clock); once half are paid,
 * one replica of checkout, billing and notifications is killed with SIGKILL (the one started
 * first, which most likely holds its service's relay lock), and buying goes on. Then the test
 * clock moves a month, so billing renews those subscriptions, and a burst of plan switches
 * (several at once, some on the same subscription) upgrades them. The test shows that:
 * - every paid checkout has one order, one subscription and one first invoice;
 * - no subscription renewed twice for a period (one invoice per subscription and period start);
 * - every webhook the merchant should get arrived, with one webhook-id per event;
 * - every event of billing's and checkout's logs is on Kafka, and none twice among the events
 *   appended after the kills (duplicates before them, from a killed relay, are reported);
 * - the sandbox charge ledger agrees with billing's paid invoices (one succeeded charge per
 *   renewal or switch invoice, none for any other) and with checkout (each succeeded hosted-page
 *   charge paid one complete session; a buyer whose payment a kill cut off pays again).
 * Nothing is timed: every wait is a generous bound against a hang. 30-90 s by default on a
 * loaded two-core machine: the longer runs are those where the kill of notifications stranded a
 * claimed webhook delivery, sent again once its lease passes (WEBHOOK_TIMEOUT_MS here 2 s, so
 * about 80 s). Larger: REPLICAS_CHECKOUTS (12), REPLICAS_CONCURRENCY (3 buyers at once),
 * REPLICAS_DOUBLE_SWITCHES (3 subscriptions asked to switch twice at once), e.g.
 * REPLICAS_CHECKOUTS=200 REPLICAS_CONCURRENCY=8 REPLICAS_DOUBLE_SWITCHES=20.
 */
const CHECKOUTS = Number(process.env.REPLICAS_CHECKOUTS ?? 12);
const CONCURRENCY = Number(process.env.REPLICAS_CONCURRENCY ?? 3);
const DOUBLE_SWITCHES = Number(process.env.REPLICAS_DOUBLE_SWITCHES ?? 3);

jest.setTimeout(20 * 60_000);

const PAIRED = ['checkout', 'billing', 'notifications'] as const;
const SINGLE = ['catalog', 'promotions'] as const;
const CLOCK_START = '2026-01-15T10:00:00Z';
const CLOCK_TARGET = '2026-02-16T00:00:00Z';
const ADMIN_TOKEN = `adm_${randomBytes(16).toString('hex')}`;

type Api = ReturnType<typeof jsonApi>;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The processes and proxies of one run. */
class Topology {
  readonly replicas = new Map<ServiceName, Replica[]>();
  private readonly proxies: Array<{ close(): Promise<void> }> = [];
  gateway = '';

  /** First replicas, catalog and promotions; once they serve, the second replicas and the gateway. */
  async start(env: NodeJS.ProcessEnv): Promise<void> {
    const urls: Record<string, string> = {};
    for (const name of [...PAIRED, ...SINGLE]) {
      const count = (PAIRED as readonly string[]).includes(name) ? 2 : 1;
      const replicas: Replica[] = [];
      for (let i = 0; i < count; i++) replicas.push(new Replica(`${name}-${i + 1}`, name, await freePort()));
      this.replicas.set(name, replicas);
      urls[`${name.toUpperCase()}_SERVICE_URL`] = await this.addressOf(replicas);
    }
    const gateway = new Replica('gateway', 'gateway', await freePort());
    this.replicas.set('gateway', [gateway]);
    this.gateway = gateway.url;
    const all = {
      ...env,
      ...urls,
      CHECKOUT_URL: `${gateway.url}/checkout`,
      PAYMENT_LINK_URL: `${gateway.url}/pay`,
      PORTAL_URL: `${gateway.url}/portal`,
    };
    const firsts = [...this.replicas.values()].map((replicas) => replicas[0]!).filter((r) => r !== gateway);
    const seconds = [...PAIRED.map((name) => this.replicas.get(name)![1]!), gateway];
    for (const wave of [firsts, seconds]) {
      for (const replica of wave) replica.start(all);
      await Promise.all(wave.map((replica) => replica.ready()));
    }
  }

  /** One replica is called directly; several through a round-robin proxy. */
  private async addressOf(replicas: Replica[]): Promise<string> {
    if (replicas.length === 1) return replicas[0]!.url;
    const proxy = await startRoundRobin(replicas.map((r) => r.url));
    this.proxies.push(proxy);
    return proxy.url;
  }

  /** SIGKILL of the first replica of `name`. */
  kill(name: ServiceName): Promise<void> {
    return this.replicas.get(name)![0]!.kill();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.replicas.values()].flat().map((replica) => replica.kill()));
    await Promise.all(this.proxies.map((proxy) => proxy.close()));
  }

  logs(): string {
    return [...this.replicas.values()]
      .flat()
      .map((replica) => replica.log())
      .join('\n');
  }
}

interface Checkouts {
  /** Sessions whose hosted page answered 303 to success_url. */
  paid: string[];
  /** Sessions paid although their payment got no 303 (a kill cut it off): found COMPLETE afterwards. */
  paidUnanswered: string[];
  onClock: Set<string>;
  /** Every session a buyer opened, paid or not. */
  created: string[];
  /** How the buyers' calls were answered, e.g. `create 201`, `pay 303`, `pay no answer`. */
  answers: Record<string, number>;
}

/** A checkout session of `pro`, asked again with the same Idempotency-Key while a replica is down. */
async function createSession(
  gateway: string,
  sk: string,
  email: string,
  clock: string | undefined,
  count: (a: string) => void,
) {
  const key = randomUUID();
  return eventually(
    async () => {
      const response = await fetch(`${gateway}/v1/checkout/sessions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({
          product_slug: 'pro',
          success_url: 'https://shop.example/thanks',
          cancel_url: 'https://shop.example/cancel',
          customer_email: email,
          ...(clock ? { test_clock: clock } : {}),
        }),
      });
      count(`create ${response.status}`);
      expect(response.status).toBe(201);
      return (await response.json()) as { id: string; url: string };
    },
    60_000,
    250,
  );
}

/** One payment on the hosted page with the test card: its status and where a 303 sends the buyer; null without an answer. */
async function payOnce(url: string): Promise<{ status: number; location: string | null } | null> {
  try {
    const response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    return { status: response.status, location: response.headers.get('location') };
  } catch {
    return null;
  }
}

/**
 * Pays as a buyer does: again, on the same page, while the answer is an error of the platform
 * (5xx) or none at all (a kill cut it off); a charge that went through is not charged again
 * (docs/lost-answers.md). True when the page answered 303 to success_url.
 */
async function pay(url: string, count: (a: string) => void): Promise<boolean> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const answer = await payOnce(url);
    count(answer ? `pay ${answer.status}` : 'pay no answer');
    if (answer && answer.status < 500) {
      return answer.status === 303 && answer.location!.startsWith('https://shop.example/thanks');
    }
    await sleep(500);
  }
  return false;
}

/**
 * CONCURRENCY buyers pay until CHECKOUTS are paid (every other one on the test clock); once half
 * are paid, `midway` runs (the kills) while they go on.
 */
async function buyCheckouts(topology: Topology, sk: string, clock: string, midway: () => Promise<void>) {
  const result: Checkouts = { paid: [], paidUnanswered: [], onClock: new Set(), created: [], answers: {} };
  const count = (answer: string) => (result.answers[answer] = (result.answers[answer] ?? 0) + 1);
  const unanswered: string[] = [];
  let started = 0;
  let halfway: () => void = () => undefined;
  const half = new Promise<void>((resolve) => (halfway = resolve));
  const buyer = async () => {
    while (result.paid.length < CHECKOUTS && started < CHECKOUTS * 3) {
      const n = started++;
      const onClock = n % 2 === 0;
      const session = await createSession(
        topology.gateway,
        sk,
        `buyer-${n}@replicas.example`,
        onClock ? clock : undefined,
        count,
      );
      result.created.push(session.id);
      if (onClock) result.onClock.add(session.id);
      if (await pay(session.url, count)) result.paid.push(session.id);
      else unanswered.push(session.id);
      if (result.paid.length >= CHECKOUTS / 2) halfway();
    }
  };
  await Promise.all([half.then(midway), ...Array.from({ length: CONCURRENCY }, buyer)]);
  const send = jsonApi(
    () => topology.gateway,
    () => sk,
  );
  for (const id of unanswered) {
    const read = await eventually(async () => {
      const found = await send('GET', `/checkout/sessions/${id}`);
      expect(found.status).toBe(200);
      return found.body;
    }, 60_000);
    if (read.status === 'COMPLETE') result.paidUnanswered.push(id);
  }
  return result;
}

/** The newest global position of a service's event log: what was appended up to now. */
async function logEnd(database: Database, schema: string): Promise<number> {
  const { rows } = await database.query<{ end: string }>(
    `SELECT coalesce(max(global_position), 0) AS end FROM ${schema}.events`,
  );
  return Number(rows[0]!.end);
}

async function getOk(send: Api, path: string) {
  return eventually(
    async () => {
      const read = await send('GET', path);
      expect(read.status).toBe(200);
      return read.body;
    },
    60_000,
    250,
  );
}

describeWithServer('DATABASE_URL', 'several replicas as separate processes', (databaseUrl) => {
  describeWithServer('KAFKA_BROKERS', 'on PostgreSQL and Kafka', (brokerList) => {
    const brokers = brokerList.split(',');
    const prefix = `replicas_${randomBytes(4).toString('hex')}.`;
    const topology = new Topology();
    let db: Awaited<ReturnType<typeof freshDatabase>> | undefined;
    let receiver: Receiver | undefined;
    let send: Api;
    let checkouts: Checkouts;
    /** Each service's log end once the killed replicas were dead: later events were appended by live ones. */
    const afterKills: Record<string, number> = {};
    const subscriptions = new Map<string, any>(); // session id -> subscription
    const switchAnswers = new Map<string, number[]>(); // subscription id -> statuses
    let products: Record<string, string> = {};
    let clock = '';

    beforeAll(async () => {
      db = await freshDatabase(databaseUrl);
      receiver = await startReceiver();
      try {
        await drive();
      } catch (error) {
        throw new Error(`${String(error)}\nlast output of the processes:\n${topology.logs()}`);
      }
    }, 15 * 60_000);

    /** The topology, a merchant, checkouts with kills midway, a month on the clock and a burst of switches. */
    async function drive() {
      const env: NodeJS.ProcessEnv = { ...process.env };
      for (const name of ['REDIS_URL', 'ADMIN_TOKEN', 'KAFKA_TOPIC_PREFIX', 'PORT', 'HOST', 'DATA_DIR'])
        delete env[name];
      await topology.start({
        ...env,
        NODE_OPTIONS: '',
        DATABASE_URL: db!.url,
        DATABASE_POOL_SIZE: '4',
        KAFKA_BROKERS: brokerList,
        KAFKA_TOPIC_PREFIX: prefix,
        INTERNAL_SECRET: randomBytes(32).toString('hex'),
        ADMIN_TOKEN,
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
        RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000000',
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox',
        // An attempt cut off by a kill is sent again once its lease passes (about a minute more).
        WEBHOOK_TIMEOUT_MS: '2000',
      });
      const sk = await merchant(receiver!.url);
      send = jsonApi(
        () => topology.gateway,
        () => sk,
      );
      clock = (await send('POST', '/test_clocks', { frozen_time: CLOCK_START })).body.id;
      checkouts = await buyCheckouts(topology, sk, clock, killOneReplicaEach);
      await provisioned();
      await advanceClock();
      await switchBurst();
    }

    afterAll(async () => {
      await topology.stop();
      await receiver?.close();
      await db?.drop();
      await deleteTopicsWithPrefix(brokers, prefix).catch(() => undefined);
    });

    /** An organization with `pro` (299) and `business` (599) monthly, and a webhook endpoint for every event. */
    async function merchant(receiverUrl: string): Promise<string> {
      const client = clientOf(topology.gateway);
      const org = await client.admin('POST', '/organizations', { name: 'Replicas' }, ADMIN_TOKEN);
      expect(org.status).toBe(201);
      const admin = (path: string, body: unknown) =>
        client.admin('POST', `/organizations/${org.body.id}${path}`, body, ADMIN_TOKEN);
      for (const [slug, price] of [
        ['pro', 299],
        ['business', 599],
      ] as const) {
        const product = await admin('/products', plan({ slug, name: slug, price }));
        expect(product.status).toBe(201);
        products = { ...products, [slug]: product.body.id };
      }
      const endpoint = await admin('/webhook_endpoints', { environment: 'SANDBOX', url: receiverUrl, events: ['*'] });
      expect(endpoint.status).toBe(201);
      return org.body.api_keys.sandbox.secret_key;
    }

    async function killOneReplicaEach() {
      for (const name of PAIRED) {
        await topology.kill(name);
        await sleep(300);
      }
      afterKills.checkout = await logEnd(db!.database, 'checkout');
      afterKills.billing = await logEnd(db!.database, 'billing');
    }

    const committed = () => [...checkouts.paid, ...checkouts.paidUnanswered];

    /** Every paid session's subscription exists in billing. */
    async function provisioned() {
      for (const sessionId of committed()) {
        const subscription = await eventually(
          async () => {
            const session = await send('GET', `/checkout/sessions/${sessionId}`);
            expect(session.body?.subscription_id).toEqual(expect.any(String));
            const read = await send('GET', `/subscriptions/${session.body.subscription_id}`);
            expect(read.status).toBe(200);
            return read.body;
          },
          120_000,
          250,
        );
        subscriptions.set(sessionId, subscription);
      }
    }

    /** A month on the clock: billing renews the subscriptions on it (once each, whichever replica runs it). */
    async function advanceClock() {
      await eventually(
        async () => {
          const advanced = await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: CLOCK_TARGET });
          expect(advanced.status).toBe(200);
        },
        60_000,
        500,
      );
      await eventually(
        async () => {
          expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready');
        },
        180_000,
        500,
      );
    }

    /** Every subscription on the clock asked to upgrade to `business`, DOUBLE_SWITCHES of them twice, all at once. */
    async function switchBurst() {
      const onClock = committed()
        .filter((sessionId) => checkouts.onClock.has(sessionId))
        .map((sessionId) => subscriptions.get(sessionId).id as string);
      const calls = onClock.flatMap((id, i) => (i < DOUBLE_SWITCHES ? [id, id] : [id]));
      const answers = await Promise.all(
        calls.map((id) => send('POST', `/subscriptions/${id}/switch`, { target_product_id: products.business })),
      );
      calls.forEach((id, i) => switchAnswers.set(id, [...(switchAnswers.get(id) ?? []), answers[i]!.status]));
    }

    const invoicesOf = async (subscriptionId: string): Promise<any[]> =>
      (await getOk(send, `/invoices?subscription_id=${subscriptionId}&limit=100`)).data;

    it('drove paid checkouts through the kills, then renewals and plan switches', () => {
      process.stdout.write(
        `replicas: ${checkouts.paid.length} paid (303), ${checkouts.paidUnanswered.length} paid without an answer, ` +
          `${checkouts.onClock.size} on the test clock; answers ${JSON.stringify(checkouts.answers)}; ` +
          `switch answers ${JSON.stringify([...switchAnswers.values()])}\n`,
      );
      expect(checkouts.paid.length).toBeGreaterThanOrEqual(CHECKOUTS);
      for (const name of PAIRED) expect(topology.replicas.get(name)!.map((r) => r.running)).toEqual([false, true]);
    });

    it('every paid checkout has exactly one order, one subscription and one first invoice', async () => {
      for (const sessionId of committed()) {
        const session = await getOk(send, `/checkout/sessions/${sessionId}`);
        expect(session).toMatchObject({ status: 'COMPLETE', order_id: expect.any(String) });
        const { rows } = await db!.database.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM checkout.events WHERE stream_id = $1 AND type = 'CheckoutSessionCompleted'`,
          [`checkout_session-${sessionId}`],
        );
        expect({ sessionId, completions: rows[0]!.n }).toEqual({ sessionId, completions: 1 });
        const ofCustomer = (await getOk(send, `/subscriptions?customer_id=${session.customer_id}&limit=100`)).data;
        expect(ofCustomer.map((s: any) => [s.id, s.checkout_session_id])).toEqual([
          [session.subscription_id, sessionId],
        ]);
        const first = (await invoicesOf(session.subscription_id)).filter((i) => i.checkout_session_id === sessionId);
        expect(first.map((i) => [i.order_id, i.status])).toEqual([[session.order_id, 'paid']]);
      }
    });

    it('renews each subscription on the clock once, and no subscription has two invoices for one period', async () => {
      for (const [sessionId, subscription] of subscriptions) {
        const invoices = await invoicesOf(subscription.id);
        const starts = invoices.map((i) => i.period_start);
        expect({ subscription: subscription.id, starts: [...new Set(starts)].length }).toEqual({
          subscription: subscription.id,
          starts: starts.length,
        });
        if (!checkouts.onClock.has(sessionId)) continue;
        const renewal = invoices.filter((i) => i.period_start === '2026-02-15T10:00:00.000Z' && !i.checkout_session_id);
        expect(renewal.map((i) => i.status)).toEqual(['paid']);
      }
    });

    it('each plan switch of the burst is taken once per subscription', async () => {
      for (const [id, statuses] of switchAnswers) {
        expect({ id, switched: statuses.filter((s) => s === 200).length }).toEqual({ id, switched: 1 });
        expect(statuses.every((s) => s === 200 || (s >= 400 && s < 500))).toBe(true);
        expect((await getOk(send, `/subscriptions/${id}`)).product.id).toBe(products.business);
      }
    });

    it('delivers every webhook at least once, with one webhook-id per event', async () => {
      const expected = new Set<string>();
      for (const [sessionId, subscription] of subscriptions) {
        expected.add(`checkout.completed ${sessionId}`);
        expected.add(`subscription.activated ${subscription.id}`);
        if (checkouts.onClock.has(sessionId)) expected.add(`subscription.renewed ${subscription.id}`);
        for (const invoice of await invoicesOf(subscription.id)) {
          if (invoice.status === 'paid') expected.add(`invoice.paid ${invoice.id}`);
        }
      }
      const idsOf = new Map<string, Set<string>>();
      await eventually(
        () => {
          idsOf.clear();
          for (const { headers, body } of receiver!.deliveries) {
            expect(headers['webhook-id']).toBe(body.id);
            const key = `${body.type} ${body.data.object.id}`;
            idsOf.set(key, new Set([...(idsOf.get(key) ?? []), body.id]));
          }
          expect([...expected].filter((key) => !idsOf.has(key))).toEqual([]);
        },
        240_000,
        500,
      );
      const unstable = [...expected].filter((key) => idsOf.get(key)!.size !== 1);
      expect(unstable).toEqual([]);
      const ids = receiver!.deliveries.map((d) => d.body.id);
      process.stdout.write(
        `replicas: ${new Set(ids).size} webhook events, ${ids.length - new Set(ids).size} sent again\n`,
      );
    });

    it('puts every event of billing and checkout on Kafka, none twice after the kills', async () => {
      const topics = { checkout: `${prefix}checkout.events`, billing: `${prefix}billing.events` };
      let messages: TopicMessage[] = [];
      await eventually(
        async () => {
          messages = await readTopics(brokers, Object.values(topics));
          for (const [service, topic] of Object.entries(topics)) {
            const { rows } = await db!.database.query<{ id: string }>(
              `SELECT event_id::text AS id FROM ${service}.events`,
            );
            const published = new Set(messages.filter((m) => m.topic === topic).map((m) => m.id));
            expect({ topic, missing: rows.filter((r) => !published.has(r.id)).length }).toEqual({ topic, missing: 0 });
          }
        },
        180_000,
        1000,
      );
      const copies = new Map<string, TopicMessage[]>();
      for (const m of messages) copies.set(`${m.topic} ${m.id}`, [...(copies.get(`${m.topic} ${m.id}`) ?? []), m]);
      const duplicated = [...copies.values()].filter((c) => c.length > 1).map((c) => c[0]!);
      const service = (topic: string) => (topic === topics.checkout ? 'checkout' : 'billing');
      const late = duplicated.filter((m) => m.globalPosition > afterKills[service(m.topic)]!);
      process.stdout.write(
        `replicas: ${messages.length} messages on Kafka, ${duplicated.length - late.length} events twice from before the kills, ` +
          `${late.length} from after them\n`,
      );
      expect(late).toEqual([]);
    });

    it('the sandbox charge ledger and billing agree: one succeeded charge per renewal or switch invoice', async () => {
      const invoices = new Map<string, any>();
      for (const subscription of subscriptions.values()) {
        for (const invoice of await invoicesOf(subscription.id)) invoices.set(invoice.id, invoice);
      }
      const { rows } = await db!.database.query<{ key: string }>(
        `SELECT idempotency_key AS key FROM checkout.sandbox_charges
         WHERE result->>'status' = 'succeeded' AND idempotency_key LIKE 'in\\_%'`,
      );
      const succeeded = new Map<string, string[]>();
      for (const { key } of rows) {
        const invoice = key.split(':')[0]!;
        succeeded.set(invoice, [...(succeeded.get(invoice) ?? []), key]);
      }
      expect([...succeeded.keys()].filter((id) => invoices.get(id)?.status !== 'paid')).toEqual([]);
      expect([...succeeded.values()].filter((keys) => keys.length > 1)).toEqual([]);
      const charged = [...invoices.values()].filter(
        (i) => i.status === 'paid' && !i.checkout_session_id && i.total > 0,
      );
      expect(charged.filter((i) => !succeeded.has(i.id)).map((i) => i.id)).toEqual([]);
      expect(charged.length).toBeGreaterThan(0);
    });

    it('the sandbox charge ledger and checkout agree: each succeeded hosted-page charge paid one complete session', async () => {
      const sessions = new Map<string, any>(); // payment intent -> session
      for (const id of checkouts.created) {
        const session = await getOk(send, `/checkout/sessions/${id}`);
        sessions.set(session.payment_intent_id, session);
      }
      const { rows } = await db!.database.query<{ key: string }>(
        `SELECT idempotency_key AS key FROM checkout.sandbox_charges
         WHERE result->>'status' = 'succeeded' AND idempotency_key LIKE 'pi\\_%'`,
      );
      const intents = rows.map(({ key }) => key.slice(0, key.lastIndexOf('-')));
      expect(intents.filter((pi, i) => intents.indexOf(pi) !== i)).toEqual([]);
      const withoutRecord = intents.filter((pi) => sessions.get(pi)?.status !== 'COMPLETE');
      expect(withoutRecord).toEqual([]);
      expect(intents.length).toBe(committed().length);
    });
  });
});
