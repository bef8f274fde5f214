import { catalogService } from '@billing/catalog';
import { promotionsService } from '@billing/promotions';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { checkoutService, expireDueSessions } from '../src';
import { dependenciesOf } from '../src/dependencies';
import { sandboxChargesTable } from '../src/payments/ledger';
import type { ChargeRequest, PaymentProcessor } from '../src/payments/processor';
import { STALE_ATTEMPT_MS } from '../src/sessions/decide';
import { paySession } from '../src/sessions/pay';
import { findSessionRow } from '../src/sessions/queries';
import { admin, call, caller, card, ebook, newOrg, urls } from './helpers';

/**
 * The double-charge replay (issue 12, part 1): whatever fails after the card was charged, the
 * charge is recorded (or found again under the same processor key) and the session is never
 * charged a second time; and hostile text in the buyer's name is refused before any charge.
 */
jest.setTimeout(120_000);

let infrastructure: Infrastructure;
let catalog: ServiceUnderTest;
let promotions: ServiceUnderTest;
let checkout: ServiceUnderTest;
let clock = new Date();
const advance = (ms: number) => (clock = new Date(clock.getTime() + ms));

/** What the processor was asked, and the failures injected around it. */
const asked: ChargeRequest[] = [];
let loseNextAnswer = false;
/**
 * Every event-store write after the next charge that appends this event type fails, until the
 * next pay call: `PaymentAttemptSucceeded` (recording the charge, alone or with the completion)
 * or `CheckoutSessionCompleted` (completing).
 */
let failAppendsOf: string | null = null;
let failingWrites = false;

beforeAll(async () => {
  infrastructure = await testInfrastructure('checkout-double-charge');
  catalog = await startServiceForTest(catalogService, { infrastructure });
  promotions = await startServiceForTest(promotionsService, { infrastructure });
  checkout = await startServiceForTest(checkoutService, {
    infrastructure,
    config: {
      CATALOG_SERVICE_URL: catalog.service.url,
      PROMOTIONS_SERVICE_URL: promotions.service.url,
      CHECKOUT_SWEEP_INTERVAL_MS: '3600000',
    },
    now: () => clock,
  });
  const { context } = checkout.service;
  const deps = dependenciesOf(context);
  const sandbox = deps.processor;
  const wrapped: PaymentProcessor = {
    name: sandbox.name,
    refusal: (environment) => sandbox.refusal(environment),
    lookup: (key) => sandbox.lookup(key),
    release: (key) => sandbox.release(key),
    refund: (request) => sandbox.refund(request),
    chargeSavedCard: (request) => sandbox.chargeSavedCard(request),
    charge: async (request) => {
      asked.push(request);
      const result = await sandbox.charge(request);
      failingWrites = failAppendsOf !== null;
      if (loseNextAnswer) {
        loseNextAnswer = false;
        throw new Error('injected: the processor charged, but its answer was lost');
      }
      return result;
    },
  };
  deps.processor = wrapped;
  const { store } = context;
  const transaction = store.transaction.bind(store);
  store.transaction = (async (fn: Parameters<typeof transaction>[0]) =>
    transaction((tx) =>
      fn({
        ...tx,
        append: async (stream, events, options) => {
          if (failingWrites && events.some((event) => event.type === failAppendsOf)) {
            throw new Error('injected: the database failed after the charge');
          }
          return tx.append(stream, events, options);
        },
      }),
    )) as typeof store.transaction;
});
afterAll(async () => {
  await checkout?.stop();
  await promotions?.stop();
  await catalog?.stop();
  await infrastructure?.close();
});
beforeEach(() => {
  asked.length = 0;
  loseNextAnswer = false;
  failAppendsOf = null;
  failingWrites = false;
});

const url = () => checkout.service.url;
const pay = (id: string, body: Record<string, unknown>) => call(url(), 'POST', `/checkout/${id}/pay`, {}, body);
const read = (org: string, id: string) => call(url(), 'GET', `/v1/checkout/sessions/${id}`, caller(org));
const typesOf = async (id: string) =>
  (await checkout.service.context.store.readStream(`checkout_session-${id}`)).map((e) => e.type);

async function session(org: string) {
  const p = await call(catalog.service.url, 'POST', '/admin/products', admin(org), ebook());
  expect(p.status).toBe(201);
  const res = await call(url(), 'POST', '/v1/checkout/sessions', caller(org), { product_id: p.body.id, ...urls });
  expect(res.status).toBe(201);
  return res.body as { id: string; client_secret: string };
}

/** Charges the sandbox made for a session's payment intent: what the buyer's card statement shows. */
async function chargesOf(org: string, id: string): Promise<number> {
  const intent = (await read(org, id)).body.payment_intent_id as string;
  const { rows } = await checkout.service.context.store.database.query<{ count: string }>(
    `SELECT count(*) AS count FROM ${sandboxChargesTable(checkout.service.context.store.tables.schema)}
     WHERE idempotency_key LIKE $1 AND result->>'status' = 'succeeded'`,
    [`${intent}-%`],
  );
  return Number(rows[0]!.count);
}

/**
 * A session whose card the sandbox charged while recording the charge failed (as a process
 * killed there): its pay call answered 500, and the charge waits under the attempt's key.
 */
async function chargedButUnrecorded(buyer: Record<string, string> = { email: 'buyer@example.com' }) {
  const org = newOrg();
  const { id } = await session(org);
  failAppendsOf = 'PaymentAttemptSucceeded';
  expect((await pay(id, card(undefined, buyer))).status).toBe(500);
  failAppendsOf = null;
  return { org, id };
}

describe('the double-charge replay', () => {
  it('completes from the recorded charge when the completion failed after the charge: the next pay call charges nothing', async () => {
    const org = newOrg();
    const { id } = await session(org);
    failAppendsOf = 'CheckoutSessionCompleted'; // the charge is recorded, the completion fails
    const first = await pay(id, card(undefined, { email: 'buyer@example.com', name: 'Mei' }));
    failAppendsOf = null;
    expect(first.status).toBe(500);
    expect((await read(org, id)).body.status).toBe('OPEN');
    expect(await chargesOf(org, id)).toBe(1);

    // A minute later (what the hosted page's buyer did), with another card even.
    advance(STALE_ATTEMPT_MS + 1_000);
    const again = await pay(id, card('5555555555554444', { email: 'other@example.com', name: 'Other' }));
    expect(again).toMatchObject({ status: 200, body: { status: 'complete' } });
    expect(asked).toHaveLength(1);
    expect(await chargesOf(org, id)).toBe(1);
    expect((await read(org, id)).body).toMatchObject({
      status: 'COMPLETE',
      customer_email: 'buyer@example.com',
      customer_name: 'Mei',
    });
    expect(await typesOf(id)).toEqual([
      'CheckoutSessionCreated',
      'PaymentAttemptStarted',
      'PaymentAttemptSucceeded',
      'CheckoutSessionCompleted',
    ]);
    expect((await pay(id, card())).status).toBe(409);
    expect(asked).toHaveLength(1);
  });

  it('finds the charge of an attempt under way whose recording failed: a retry at once completes from it', async () => {
    const { org, id } = await chargedButUnrecorded();
    expect(await chargesOf(org, id)).toBe(1);
    // At once, the attempt still under way: the processor is asked under its key, not charged.
    const retry = await pay(id, card('4000000000009995', { email: 'other@example.com' }));
    expect(retry).toMatchObject({ status: 200, body: { status: 'complete' } });
    expect(asked).toHaveLength(1);
    expect(await chargesOf(org, id)).toBe(1);
    expect((await read(org, id)).body).toMatchObject({ status: 'COMPLETE', customer_email: 'buyer@example.com' });
    expect(await typesOf(id)).toEqual([
      'CheckoutSessionCreated',
      'PaymentAttemptStarted',
      'PaymentAttemptSucceeded',
      'CheckoutSessionCompleted',
    ]);
  });

  it('answers two retries that find the same charge at once both complete, with one charge and one completion', async () => {
    const { org, id } = await chargedButUnrecorded();
    const retries = await Promise.all([pay(id, card()), pay(id, card())]);
    expect(retries.map((r) => [r.status, r.body.status])).toEqual([
      [200, 'complete'],
      [200, 'complete'],
    ]);
    expect(asked).toHaveLength(1);
    expect(await chargesOf(org, id)).toBe(1);
    expect((await typesOf(id)).filter((type) => type === 'CheckoutSessionCompleted')).toHaveLength(1);
  });

  it('keeps the 409 when the processor does not answer the status query: nothing charged, nothing recorded', async () => {
    const { org, id } = await chargedButUnrecorded();
    const processor = dependenciesOf(checkout.service.context).processor;
    const lookup = processor.lookup;
    processor.lookup = async () => {
      throw new Error('injected: the status query got no answer');
    };
    try {
      const during = await pay(id, card(undefined, { email: 'buyer@example.com' }));
      expect([during.status, during.body.error.message]).toEqual([409, expect.stringMatching(/in progress/)]);
    } finally {
      processor.lookup = lookup;
    }
    expect(asked).toHaveLength(1);
    expect((await read(org, id)).body.status).toBe('OPEN');
    // Answered again: the retry completes from the one charge.
    expect(await pay(id, card(undefined, { email: 'buyer@example.com' }))).toMatchObject({
      status: 200,
      body: { status: 'complete' },
    });
    expect(await chargesOf(org, id)).toBe(1);
  });

  it('keeps an attempt under way that has not charged (409), and takes it over after a minute under its key', async () => {
    const org = newOrg();
    const { id } = await session(org);
    const real = dependenciesOf(checkout.service.context).processor.charge;
    const crashedKeys: string[] = [];
    // The process dies before charging: nothing charged, and the attempt's end never written.
    dependenciesOf(checkout.service.context).processor.charge = async (request) => {
      crashedKeys.push(request.idempotencyKey);
      failAppendsOf = 'PaymentAttemptFailed';
      failingWrites = true;
      throw new Error('injected: the process died before charging');
    };
    try {
      expect((await pay(id, card(undefined, { email: 'buyer@example.com' }))).status).toBe(500);
    } finally {
      dependenciesOf(checkout.service.context).processor.charge = real;
      failAppendsOf = null;
      failingWrites = false;
    }
    expect((await read(org, id)).body.status).toBe('OPEN');
    const during = await pay(id, card(undefined, { email: 'buyer@example.com' }));
    expect([during.status, during.body.error.message]).toEqual([409, expect.stringMatching(/in progress/)]);
    expect(asked).toHaveLength(0);
    advance(STALE_ATTEMPT_MS + 1_000);
    const retry = await pay(id, card(undefined, { email: 'buyer@example.com' }));
    expect(retry).toMatchObject({ status: 200, body: { status: 'complete' } });
    expect(asked.map((request) => request.idempotencyKey)).toEqual(crashedKeys);
    expect(await chargesOf(org, id)).toBe(1);
  });

  it('asks under the same key after the processor charged but its answer was lost', async () => {
    const org = newOrg();
    const { id } = await session(org);
    loseNextAnswer = true;
    expect((await pay(id, card(undefined, { email: 'buyer@example.com' }))).status).toBe(500);
    expect((await read(org, id)).body.status).toBe('OPEN');
    const retry = await pay(id, card(undefined, { email: 'buyer@example.com' }));
    expect(retry).toMatchObject({ status: 200, body: { status: 'complete' } });
    expect(new Set(asked.map((request) => request.idempotencyKey)).size).toBe(1);
    expect(await chargesOf(org, id)).toBe(1);
  });

  it('pays from a stale read of the session as from the stream: the version check sends it back to the stream', async () => {
    const org = newOrg();
    const { id } = await session(org);
    const { context } = checkout.service;
    const stale = (await findSessionRow(context.store.database, context.store.tables.schema, id))!;
    expect((await pay(id, card('4000000000000002', { email: 'buyer@example.com' }))).status).toBe(402);
    // The page read the session before the decline was written: StartPayment is decided again on the stream.
    const body = { email: 'buyer@example.com', card_number: '4242424242424242', exp: '12/34', cvc: '123' };
    const outcome = await paySession(context, id, body, { uiMode: 'hosted' }, stale);
    expect(outcome).toMatchObject({ status: 'complete', session: { status: 'COMPLETE' } });
    expect(new Set(asked.map((request) => request.idempotencyKey)).size).toBe(2);
    expect(await chargesOf(org, id)).toBe(1);
    expect(await typesOf(id)).toEqual([
      'CheckoutSessionCreated',
      'PaymentAttemptStarted',
      'PaymentAttemptFailed',
      'PaymentAttemptStarted',
      'PaymentAttemptSucceeded',
      'CheckoutSessionCompleted',
    ]);
    expect((await read(org, id)).body.status).toBe('COMPLETE');
  });

  it('gives a declined card a new key, so another card can pay', async () => {
    const org = newOrg();
    const { id } = await session(org);
    expect((await pay(id, card('4000000000000002', { email: 'buyer@example.com' }))).status).toBe(402);
    expect((await pay(id, card(undefined, { email: 'buyer@example.com' }))).status).toBe(200);
    expect(new Set(asked.map((request) => request.idempotencyKey)).size).toBe(2);
    expect(await chargesOf(org, id)).toBe(1);
  });

  it('completes, never expires, a session charged and left: the sweep finds the charge under its key', async () => {
    const { org, id } = await chargedButUnrecorded({ email: 'gone@example.com', name: 'Gone' });
    advance(30 * 60_000 + 1_000);
    expect(await expireDueSessions(checkout.service.context)).not.toContain(id);
    expect((await read(org, id)).body).toMatchObject({ status: 'COMPLETE', customer_email: 'gone@example.com' });
    expect(await chargesOf(org, id)).toBe(1);
    expect(asked).toHaveLength(1);
  });

  it('expires a session whose crashed attempt never charged, after asking the processor', async () => {
    const org = newOrg();
    const { id } = await session(org);
    // A crash between the attempt and the charge: only the attempt is in the stream.
    const real = dependenciesOf(checkout.service.context).processor.charge;
    dependenciesOf(checkout.service.context).processor.charge = async () => {
      throw Object.assign(new Error('injected: the process died before charging'), { crash: true });
    };
    try {
      expect((await pay(id, card(undefined, { email: 'x@example.com' }))).status).toBe(500);
    } finally {
      dependenciesOf(checkout.service.context).processor.charge = real;
    }
    advance(30 * 60_000 + 1_000);
    expect(await expireDueSessions(checkout.service.context)).toContain(id);
    expect(await chargesOf(org, id)).toBe(0);
  });
});

describe('hostile text in the buyer name (JSON pay)', () => {
  it.each([
    ['a NUL', 'Mei\u0000Lin'],
    ['a lone surrogate', 'Mei\uD800'],
    ['a control character', 'Mei\u0007'],
    ['a line break', 'Mei\nLin'],
  ])('refuses %s with 422 before anything is charged; the session stays payable', async (_what, name) => {
    const org = newOrg();
    const { id } = await session(org);
    const refused = await pay(id, card(undefined, { email: 'buyer@example.com', name }));
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({
      code: 'validation_error',
      details: [expect.objectContaining({ path: 'name', code: 'invalid_characters' })],
    });
    expect(asked).toHaveLength(0);
    expect(await typesOf(id)).toEqual(['CheckoutSessionCreated']);
    expect((await pay(id, card(undefined, { email: 'buyer@example.com', name: 'Mei Lin' }))).status).toBe(200);
    expect(await chargesOf(org, id)).toBe(1);
  });
});
