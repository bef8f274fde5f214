import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { ApiError, type CallerIdentity } from '@billing/contracts';
import type { LaneRequest, LaneResponse } from '@billing/service';
import type { UpstreamHandler } from '../upstream';
import { type PublicLaneOptions, publicLane } from './public-lane';
import type { PublicRoute } from './public-routes';

const ROUTES: PublicRoute[] = [
  { method: 'get', path: '/v1/products', upstream: 'catalog', keys: ['secret', 'publishable'] },
  // Listed before the pattern that also matches it, as the gateway's table lists it.
  { method: 'get', path: '/v1/customers/entitlements', upstream: 'billing', keys: ['secret', 'publishable'] },
  { method: 'get', path: '/v1/customers/:id', upstream: 'billing', keys: ['secret'] },
  { method: 'post', path: '/v1/customers', upstream: 'billing', keys: ['secret'] },
  { method: 'get', path: '/v1/portal/sessions/:id', upstream: 'billing', keys: ['secret'] },
  { method: 'post', path: '/v1/customers/:id/credits/spend', upstream: 'billing', keys: ['secret'], bodyKeyed: true },
];

const SECRET: CallerIdentity = { organization: 'org_1', environment: 'SANDBOX', keyKind: 'secret', keyId: 'key_1' };
const PUBLISHABLE: CallerIdentity = { ...SECRET, keyKind: 'publishable', keyId: 'key_2' };

const request = (url: string, headers: Record<string, string> = {}, method = 'GET') =>
  ({
    method,
    url,
    headers: { authorization: 'Bearer sk_test_x', ...headers },
    socket: {},
  }) as unknown as IncomingMessage;

const SPEND = '/v1/customers/cus_1/credits/spend';

/** A POST with `body`, its length and JSON type given unless `headers` say otherwise. */
const post = (url: string, body: string, headers: Record<string, string> = {}) =>
  Object.assign(Readable.from([Buffer.from(body)]), {
    method: 'POST',
    url,
    headers: {
      authorization: 'Bearer sk_test_x',
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      ...headers,
    },
    socket: {},
  }) as unknown as IncomingMessage;

/** A response that records what was written on it. */
function response() {
  const headers: Record<string, unknown> = {};
  const written: { status?: number; body?: string } = {};
  const res = Object.assign(new EventEmitter(), {
    locals: {} as Record<string, unknown>,
    statusCode: 200,
    req: { headers: {} },
    setHeader: (name: string, value: unknown) => void (headers[name.toLowerCase()] = value),
    end: (body: string) => void Object.assign(written, { status: res.statusCode, body }),
  });
  return { res: res as unknown as LaneResponse, headers, written };
}

function lane(overrides: Partial<PublicLaneOptions> = {}) {
  const forwarded: {
    upstream: string;
    headers: IncomingMessage['headers'];
    locals: Record<string, unknown>;
    body?: string;
  }[] = [];
  const options: PublicLaneOptions = {
    routes: ROUTES,
    cachedCaller: () => SECRET,
    clientAddress: () => '127.0.0.1',
    admit: () => undefined,
    actAs: (_req, res, caller) => void (res.locals.caller = caller),
    limit: () => Promise.resolve(true),
    upstream: (name) =>
      ((req: LaneRequest & { rawBody?: Buffer }, res: LaneResponse) =>
        void forwarded.push({
          upstream: name,
          headers: { ...req.headers },
          locals: res.locals,
          body: req.rawBody?.toString(),
        })) as UpstreamHandler,
    ...overrides,
  };
  return { lane: publicLane(options), forwarded };
}

/** Accepts `req` on `lane` and runs its handler to the end. */
async function serve(accepted: ReturnType<typeof lane>, req: IncomingMessage) {
  const handle = accepted.lane.accept(req);
  if (!handle) throw new Error('declined');
  const answer = response();
  handle(Object.assign(req, { originalUrl: req.url }) as LaneRequest, answer.res);
  // A POST's body is read first: a few turns of the event loop.
  await new Promise((resolve) => setTimeout(resolve, 20));
  return answer;
}

describe('the public read lane', () => {
  it('takes a GET of a public route by a cached key it allows, with or without a query or trailing slash', () => {
    const { lane: readLane } = lane();
    expect(readLane.accept(request('/v1/products'))).toBeInstanceOf(Function);
    expect(readLane.accept(request('/v1/products?limit=5'))).toBeInstanceOf(Function);
    expect(readLane.accept(request('/v1/products/'))).toBeInstanceOf(Function);
    expect(readLane.accept(request('/v1/customers/cus_1'))).toBeInstanceOf(Function);
  });

  it.each([
    ['a write', request('/v1/customers', {}, 'POST')],
    ['a HEAD', request('/v1/products', {}, 'HEAD')],
    ["a browser's request", request('/v1/products', { origin: 'https://shop.example' })],
    ["the dashboard's own call", request('/v1/products', { 'x-dashboard-credential': 'signed' })],
    ['a request with a body', request('/v1/products', { 'content-length': '2' })],
    ['a chunked body', request('/v1/products', { 'transfer-encoding': 'chunked' })],
    ['a path no route has', request('/v1/nothing')],
    ['a path outside /v1', request('/dashboard')],
    ['a target with a fragment', request('/v1/products#x')],
    ['a target with a space', request('/v1/products x')],
    ['an entitlement check (limits of its own)', request('/v1/customers/entitlements')],
    ['a portal session (error codes of its own)', request('/v1/portal/sessions/ps_1')],
  ])('declines %s: express takes it', (_case, req) => {
    expect(lane().lane.accept(req)).toBeUndefined();
  });

  it('declines a key not in the cache, and a key the route does not allow (express answers 401)', () => {
    expect(lane({ cachedCaller: () => undefined }).lane.accept(request('/v1/products'))).toBeUndefined();
    const publishable = lane({ cachedCaller: () => PUBLISHABLE }).lane;
    expect(publishable.accept(request('/v1/customers/cus_1'))).toBeUndefined();
    expect(publishable.accept(request('/v1/products'))).toBeInstanceOf(Function);
  });

  it("forwards to the route's service with the client's identity headers dropped and the route named", async () => {
    const readLane = lane();
    const answer = await serve(readLane, request('/v1/customers/cus_1', { 'x-billing-organization': 'org_forged' }));
    expect(readLane.forwarded).toEqual([
      expect.objectContaining({ upstream: 'billing', locals: expect.objectContaining({ caller: SECRET }) }),
    ]);
    expect(readLane.forwarded[0]!.headers['x-billing-organization']).toBeUndefined();
    expect(answer.res.locals.routePattern).toBe('/v1/customers/:id');
    // A Secret-only route is no browser's: no Vary.
    expect(answer.headers.vary).toBeUndefined();
  });

  it('says the answer varies with Origin on a route browsers may call, as CORS does', async () => {
    expect((await serve(lane(), request('/v1/products'))).headers.vary).toBe('Origin');
  });

  it('answers an admission refusal itself and forwards nothing', async () => {
    const refusal = new ApiError(503, 'service_unavailable', 'The platform is at capacity; retry in a moment');
    const readLane = lane({ admit: () => refusal });
    const answer = await serve(readLane, request('/v1/products'));
    expect(answer.written.status).toBe(503);
    expect(JSON.parse(answer.written.body!)).toEqual(refusal.toEnvelope());
    expect(readLane.forwarded).toEqual([]);
  });

  it('forwards nothing when the limits refused (they wrote the 429)', async () => {
    const readLane = lane({ limit: () => Promise.resolve(false) });
    await serve(readLane, request('/v1/products'));
    expect(readLane.forwarded).toEqual([]);
  });
});

describe('the public lane, body-keyed POSTs (credit spends)', () => {
  const body = JSON.stringify({ amount: 1, idempotency_key: 'spend-1' });

  it('takes a POST to a body-keyed route by a cached key, sent without an Idempotency-Key', () => {
    expect(lane().lane.accept(post(SPEND, body))).toBeInstanceOf(Function);
  });

  it.each([
    ['a POST with an Idempotency-Key (its record is kept)', post(SPEND, body, { 'idempotency-key': 'k1' })],
    ['a POST to a route that is not body-keyed', post('/v1/customers', body)],
    ['a chunked body', post(SPEND, body, { 'transfer-encoding': 'chunked', 'content-length': '' })],
    ['a body without its length', post(SPEND, body, { 'content-length': 'x' })],
    ['a body over 1 MB', post(SPEND, body, { 'content-length': String(1024 * 1024 + 1) })],
    ['a compressed body (415 from express)', post(SPEND, body, { 'content-encoding': 'gzip' })],
    ['a JSON body in another charset', post(SPEND, body, { 'content-type': 'application/json; charset=latin1' })],
    ["a browser's POST", post(SPEND, body, { origin: 'https://shop.example' })],
    ['a PUT', Object.assign(post(SPEND, body), { method: 'PUT' })],
  ])('declines %s: express takes it', (_case, req) => {
    expect(lane().lane.accept(req)).toBeUndefined();
  });

  it('declines a Publishable Key on a Secret-only spend (express answers 401)', () => {
    expect(lane({ cachedCaller: () => PUBLISHABLE }).lane.accept(post(SPEND, body))).toBeUndefined();
  });

  it('forwards the body as it came, with a generated Idempotency-Key on the answer', async () => {
    const spendLane = lane();
    const answer = await serve(spendLane, post(SPEND, body, { 'x-billing-organization': 'org_forged' }));
    expect(spendLane.forwarded).toEqual([
      expect.objectContaining({ upstream: 'billing', body, locals: expect.objectContaining({ caller: SECRET }) }),
    ]);
    expect(spendLane.forwarded[0]!.headers['x-billing-organization']).toBeUndefined();
    expect(answer.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(answer.res.locals.routePattern).toBe('/v1/customers/:id/credits/spend');
  });

  it('refuses a body with a byte-order mark as the services do, and forwards nothing', async () => {
    const spendLane = lane();
    const answer = await serve(spendLane, post(SPEND, `\ufeff${body}`));
    expect(answer.written.status).toBe(400);
    expect(JSON.parse(answer.written.body!).error.message).toMatch(/byte-order mark/);
    expect(spendLane.forwarded).toEqual([]);
  });

  it('reads nothing and forwards nothing when the limits refused', async () => {
    const spendLane = lane({ limit: () => Promise.resolve(false) });
    await serve(spendLane, post(SPEND, body));
    expect(spendLane.forwarded).toEqual([]);
  });
});
