import { ApiError } from '@billing/contracts';
import { z } from 'zod';
import { http, postJson } from '../test/http';
import { createApp, createLogger, startService, validate, type ServiceHandle } from './index';

type LogLine = Record<string, unknown> & { msg?: string; request_id?: string; level?: string };

const logs: LogLine[] = [];
const logger = createLogger('test', { level: 'debug', destination: { write: (line) => logs.push(JSON.parse(line)) } });

const Charge = z.object({
  name: z.string().min(1),
  amount: z.number().int().positive(),
  currency: z.literal('TWD').default('TWD'),
});
const ListQuery = z.object({ limit: z.coerce.number().int().min(1).max(100).default(10) });
const ItemParams = z.object({ id: z.string().startsWith('itm_') });

let dbUp = true;
const app = createApp({
  name: 'test',
  logger,
  readiness: [
    async function database() {
      if (!dbUp) throw new Error('connection refused by 10.0.0.5');
    },
  ],
  routes: (router) => {
    router.post('/charges', validate({ body: Charge }), (req, res) => {
      // Compile-time proof that the parsed body is typed: these lines would not compile otherwise.
      const amount: number = req.body.amount;
      const currency: 'TWD' = res.locals.input.body.currency;
      res.status(201).json({ received: req.body, amount_type: typeof amount, currency });
    });
    router.post('/charges/:id', validate({ params: ItemParams, query: ListQuery, body: Charge }), (_req, res) => {
      res.status(201).json(res.locals.input);
    });
    router.get('/items', validate({ query: ListQuery }), (_req, res) => {
      const limit: number = res.locals.input.query.limit;
      res.json({ limit, limit_type: typeof limit });
    });
    router.get('/items/:id', validate({ params: ItemParams }), (req, res) => {
      res.json({ id: req.params.id });
    });
    router.get('/log', (_req, res) => {
      res.locals.log.info('inside handler');
      res.json({ request_id: res.locals.requestId });
    });
    router.get('/boom', () => {
      throw new Error('password=hunter2 in the connection string');
    });
    router.get('/async-boom', async () => {
      await Promise.resolve();
      throw new TypeError('cannot read properties of undefined (secret)');
    });
    router.get('/conflict', async () => {
      throw ApiError.of('conflict', 'Customer already subscribed', [
        { existing_subscription_id: 'sub_1', status: 'ACTIVE' },
      ]);
    });
  },
});

let service: ServiceHandle;
beforeAll(async () => {
  service = await startService({ app, port: 0, logger, shutdownTimeoutMs: 1_000 });
});
afterAll(async () => {
  await service.shutdown();
});
beforeEach(() => {
  logs.length = 0;
  dbUp = true;
});

const url = (path: string): string => `${service.url}${path}`;

describe('startService', () => {
  it('listens on a free port when given 0 and reports it in url', () => {
    expect(service.port).toBeGreaterThan(0);
    expect(service.url).toBe(`http://127.0.0.1:${service.port}`);
  });
});

describe('JSON bodies', () => {
  it('answers 413 payload_too_large for a body over the limit', async () => {
    const res = await postJson(url('/charges'), { name: 'x'.repeat(150 * 1024), amount: 1 });
    expect(res.status).toBe(413);
    expect(res.body).toEqual({ error: { code: 'payload_too_large', message: expect.stringContaining('100kb') } });
  });

  it('answers 400 bad_request for malformed JSON', async () => {
    const res = await postJson(url('/charges'), '{"name": "a", ');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: 'bad_request', message: expect.any(String) } });
  });
});

describe('GET /metrics', () => {
  it('counts requests by method, route pattern and status, in the Prometheus text format', async () => {
    await postJson(url('/charges'), { name: 'a', amount: 5 });
    await http(url('/items/itm_42'));
    await http(url('/nowhere/at/all'));
    const res = await http(url('/metrics'));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/plain');
    const line = (labels: string) =>
      res.text.split('\n').find((l) => l.startsWith(`http_requests_total{${labels}`)) ?? 'missing';
    expect(line('method="POST",route="/charges",status="201",service="test"}')).toMatch(/ [1-9]\d*$/);
    expect(line('method="GET",route="/items/:id",status="200",service="test"}')).toMatch(/ [1-9]\d*$/);
    expect(line('method="GET",route="unmatched",status="404",service="test"}')).toMatch(/ [1-9]\d*$/);
    expect(res.text).not.toContain('itm_42');
    expect(res.text).toContain(
      'http_request_duration_seconds_count{service="test",method="POST",route="/charges",status="201"}',
    );
    expect(res.text).toContain('process_cpu_user_seconds_total{service="test"}');
  });
});

describe('parseJsonBodies: false', () => {
  it('leaves the body unread for the route, malformed or not', async () => {
    const proxy = createApp({
      name: 'proxy',
      logger,
      parseJsonBodies: false,
      routes: (router) => {
        router.post('/forward', async (req, res) => {
          const chunks: Buffer[] = [];
          for await (const chunk of req) chunks.push(chunk as Buffer);
          res.json({ parsed: req.body !== undefined, raw: Buffer.concat(chunks).toString('utf8') });
        });
      },
    });
    const running = await startService({ app: proxy, port: 0, logger, shutdownTimeoutMs: 1_000 });
    try {
      const res = await postJson(`${running.url}/forward`, '{"name": ');
      expect(res).toMatchObject({ status: 200, body: { parsed: false, raw: '{"name": ' } });
    } finally {
      await running.shutdown();
    }
  });
});

describe('validate()', () => {
  it('answers 422 validation_error with details[] of {path, message, code}', async () => {
    const res = await postJson(url('/charges'), { name: '', amount: 'ten' });
    expect(res.status).toBe(422);
    expect(res.body).toEqual({
      error: {
        code: 'validation_error',
        message: expect.any(String),
        details: [
          { path: 'name', message: expect.any(String), code: 'too_small' },
          { path: 'amount', message: expect.any(String), code: 'invalid_type' },
        ],
      },
    });
  });

  it('hands the parsed body to the handler: defaults applied, unknown fields stripped', async () => {
    const res = await postJson(url('/charges'), { name: 'Pro plan', amount: 990, admin: true });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      received: { name: 'Pro plan', amount: 990, currency: 'TWD' },
      amount_type: 'number',
      currency: 'TWD',
    });
  });

  it('treats a non-JSON body as missing and reports it at the empty path', async () => {
    const res = await http(url('/charges'), { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'hi' });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({
      error: { code: 'validation_error', details: [{ path: '', code: 'invalid_type' }] },
    });
  });

  it('parses the query into res.locals.input with coercion and defaults', async () => {
    expect((await http(url('/items?limit=25'))).body).toEqual({ limit: 25, limit_type: 'number' });
    expect((await http(url('/items'))).body).toEqual({ limit: 10, limit_type: 'number' });
  });

  it.each([
    ['limit=500', 'too_big'],
    ['limit=0', 'too_small'],
    ['limit=abc', 'invalid_type'],
    ['limit=2.5', 'invalid_type'],
  ])('answers a bad query (%s) with 400 bad_request naming the parameter', async (query, code) => {
    const bad = await http(url(`/items?${query}`));
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({
      error: {
        code: 'bad_request',
        message: 'Invalid query parameter: limit',
        details: [{ path: 'limit', message: expect.any(String), code }],
      },
    });
  });

  it('answers bad path params with 400 bad_request', async () => {
    expect((await http(url('/items/itm_1'))).body).toEqual({ id: 'itm_1' });
    const bad = await http(url('/items/nope'));
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({
      error: { code: 'bad_request', message: 'Invalid path parameter: id', details: [{ path: 'id' }] },
    });
  });

  it('checks the parameters before the body: a bad query wins over a bad body', async () => {
    const res = await postJson(url('/charges/itm_1?limit=0'), { name: '' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { details: [{ path: 'limit' }] } });
    const body = await postJson(url('/charges/itm_1?limit=5'), { name: '' });
    expect(body.status).toBe(422);
  });
});

describe('request id', () => {
  it('echoes a sane X-Request-Id and puts it on every log line of the request', async () => {
    const res = await http(url('/log'), { headers: { 'x-request-id': 'gw-1:abc_DEF.9' } });
    expect(res.headers['x-request-id']).toBe('gw-1:abc_DEF.9');
    expect(res.body).toEqual({ request_id: 'gw-1:abc_DEF.9' });
    const lines = logs.filter((line) => line.request_id === 'gw-1:abc_DEF.9');
    expect(lines.map((line) => line.msg)).toEqual(['inside handler', 'request completed']);
    expect(lines[1]).toMatchObject({
      method: 'GET',
      path: '/log',
      status: 200,
      duration_ms: expect.any(Number),
      level: 'info',
    });
  });

  it('generates a req_ id when none is given', async () => {
    const res = await http(url('/log'));
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{24}$/);
  });

  it.each([
    ['spaces and markup', '<script>alert(1)</script>'],
    ['a header list', 'a, b'],
    ['an over-long value', 'x'.repeat(129)],
  ])('replaces %s with a generated id', async (_label, value) => {
    const res = await http(url('/log'), { headers: { 'x-request-id': value } });
    expect(res.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]{24}$/);
  });

  it('accepts an id of exactly 128 characters', async () => {
    const id = 'a'.repeat(128);
    expect((await http(url('/log'), { headers: { 'x-request-id': id } })).headers['x-request-id']).toBe(id);
  });

  it('leaves the query string out of the request log', async () => {
    await http(url('/items?email=someone@example.com'));
    const line = logs.find((l) => l.msg === 'request completed');
    expect(line).toMatchObject({ path: '/items' });
    expect(JSON.stringify(logs)).not.toContain('someone@example.com');
  });
});

describe('errors', () => {
  it('answers 404 not_found in the envelope for an unknown route', async () => {
    const res = await http(url('/nowhere'), { method: 'DELETE' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { code: 'not_found', message: expect.any(String) } });
  });

  it.each(['/boom', '/async-boom'])(
    'answers 500 internal_server_error for %s without leaking the error',
    async (path) => {
      const res = await http(url(path));
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { code: 'internal_server_error', message: 'An internal error occurred' } });
      expect(res.text).not.toContain('hunter2');
      expect(res.text).not.toContain('secret');
      const logged = logs.find((line) => line.msg === 'request error');
      expect(logged).toMatchObject({ level: 'error', request_id: res.headers['x-request-id'] });
      expect(JSON.stringify(logged)).toMatch(/hunter2|secret/);
    },
  );

  it('maps an ApiError to its status and envelope', async () => {
    const res = await http(url('/conflict'));
    expect(res.status).toBe(409);
    expect(res.body).toEqual({
      error: {
        code: 'conflict',
        message: 'Customer already subscribed',
        details: [{ existing_subscription_id: 'sub_1', status: 'ACTIVE' }],
      },
    });
  });
});

describe('health', () => {
  it('/healthz answers 200 ok', async () => {
    const res = await http(url('/healthz'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('/readyz answers 200 ready when every check passes', async () => {
    const res = await http(url('/readyz'));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready' });
  });

  it('/readyz answers 503 service_unavailable naming the failing check, not its error', async () => {
    dbUp = false;
    const res = await http(url('/readyz'));
    expect(res.status).toBe(503);
    expect(res.body).toEqual({
      error: { code: 'service_unavailable', message: 'Service is not ready', details: [{ check: 'database' }] },
    });
    expect(res.text).not.toContain('10.0.0.5');
    expect(logs.find((line) => line.msg === 'readiness check failed')).toMatchObject({ check: 'database' });
  });

  it('/readyz fails a check that hangs past the readiness timeout', async () => {
    const hanging = createApp({
      name: 'hanging',
      logger,
      readinessTimeoutMs: 50,
      readiness: [() => new Promise<void>(() => undefined)],
    });
    const started = await startService({ app: hanging, port: 0, logger });
    try {
      const res = await http(`${started.url}/readyz`);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ error: { code: 'service_unavailable', details: [{ check: 'check_0' }] } });
    } finally {
      await started.shutdown();
    }
  });

  it('logs probes at debug so they do not drown real traffic', async () => {
    await http(url('/healthz'));
    expect(logs.find((line) => line.path === '/healthz')).toMatchObject({ level: 'debug' });
  });
});
