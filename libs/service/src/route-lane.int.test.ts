import { ApiError } from '@billing/contracts';
import { signInternalCall } from '@billing/signing';
import { z } from 'zod';
import { type HttpResponse, http } from '../test/http';
import {
  type RouteLaneSpec,
  type ServiceApp,
  type ServiceHandle,
  createApp,
  createLogger,
  requireCaller,
  secretCallerOf,
  startService,
  validate,
} from './index';
import type { Request } from 'express';

const SECRET = 'route-lane-test-secret-of-32-characters-or-more';
const logger = createLogger('test', { level: 'silent' });

const SCHEMAS = {
  params: z.object({ id: z.string().startsWith('cus_') }),
  body: z.strictObject({ amount: z.number().int().positive(), note: z.string().optional() }),
};

/** The route's answer, or its refusals: a note asks for one. */
const spec: RouteLaneSpec<typeof SCHEMAS> = {
  method: 'POST',
  path: '/v1/customers/:id/spend',
  schemas: SCHEMAS,
  before: [requireCaller],
  answer: async (req, { params, body }) => {
    if (body.note === 'too much') throw ApiError.of('conflict', 'Not enough', [{ balance: 1 }]);
    if (body.note === 'crash') throw new Error('password=hunter2');
    return { customer: params.id, amount: body.amount, organization: secretCallerOf(req as Request).organization };
  },
  translateError: (error) =>
    error instanceof ApiError && error.code === 'conflict' ? new ApiError(402, 'insufficient', error.message) : error,
};

/** The service twice: the route through express only, and the same route with its lane. */
function appOf(withLane: boolean): ServiceApp {
  return createApp({
    name: 'test',
    logger,
    bodyLimit: '1kb',
    internalAuth: { secret: SECRET },
    routes: (app) => {
      app.use('/v1', requireCaller);
      app.post(spec.path, validate(spec.schemas), async (req, res, next) => {
        try {
          res.json(await spec.answer(req, res.locals.input));
        } catch (error) {
          next(spec.translateError!(error, res));
        }
      });
      if (withLane) app.takeFirst(app.routeLane(spec));
    },
  });
}

let viaExpress: ServiceHandle;
let viaLane: ServiceHandle;
beforeAll(async () => {
  viaExpress = await startService({ app: appOf(false), port: 0, logger, shutdownTimeoutMs: 1_000 });
  viaLane = await startService({ app: appOf(true), port: 0, logger, shutdownTimeoutMs: 1_000 });
});
afterAll(async () => {
  await viaExpress.shutdown();
  await viaLane.shutdown();
});

type Call = { path: string; body: string | Buffer; headers?: Record<string, string>; signedBody?: string };

/** `call` signed as the gateway signs a Secret Key's request (over `signedBody` when another body is sent). */
async function send(service: ServiceHandle, { path, body, headers = {}, signedBody }: Call): Promise<HttpResponse> {
  const signed = signInternalCall(SECRET, {
    scope: 'key',
    method: 'POST',
    path,
    body: signedBody ?? body,
    identity: { organization: 'org_1', environment: 'SANDBOX', keyKind: 'secret', keyId: 'key_1' },
  });
  return http(`${service.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signed, ...headers },
    body,
  });
}

/** What two answers must share: all but the date and the request id. */
const answerOf = ({ status, headers, text }: HttpResponse) => {
  const { date: _date, 'x-request-id': _id, ...kept } = headers;
  return { status, headers: kept, text };
};

async function lanes(service: ServiceHandle): Promise<number> {
  const metrics = await http(`${service.url}/metrics`);
  return Number(/^http_lane_requests_total(?:\{[^}]*\})? (\d+)/m.exec(metrics.text)?.[1] ?? 0);
}

const json = (value: unknown) => JSON.stringify(value);

describe('a route lane (docs/decisions/0036)', () => {
  it.each<[string, Call, number]>([
    ['an answer', { path: '/v1/customers/cus_1/spend', body: json({ amount: 5 }) }, 200],
    ['a query and a trailing slash', { path: '/v1/customers/cus_1/spend/?x=1', body: json({ amount: 5 }) }, 200],
    ['an escaped parameter', { path: '/v1/customers/cus_%C3%A9/spend', body: json({ amount: 5 }) }, 200],
    ['a parameter its schema refuses (400)', { path: '/v1/customers/x_1/spend', body: json({ amount: 5 }) }, 400],
    ['a body its schema refuses (422)', { path: '/v1/customers/cus_1/spend', body: json({ amount: -1 }) }, 422],
    ['an unknown field (422)', { path: '/v1/customers/cus_1/spend', body: json({ amount: 1, more: 1 }) }, 422],
    ['malformed JSON', { path: '/v1/customers/cus_1/spend', body: '{"amount":' }, 400],
    ['a byte-order mark', { path: '/v1/customers/cus_1/spend', body: `\ufeff${json({ amount: 1 })}` }, 400],
    [
      'a body over the limit (413)',
      { path: '/v1/customers/cus_1/spend', body: json({ amount: 1, note: 'x'.repeat(2000) }) },
      413,
    ],
    [
      'a text body (no JSON to read)',
      { path: '/v1/customers/cus_1/spend', body: 'amount=1', headers: { 'content-type': 'text/plain' } },
      422,
    ],
    [
      'a compressed body (415)',
      { path: '/v1/customers/cus_1/spend', body: json({ amount: 1 }), headers: { 'content-encoding': 'gzip' } },
      415,
    ],
    [
      'a body that is not the one signed (401)',
      { path: '/v1/customers/cus_1/spend', body: json({ amount: 9 }), signedBody: json({ amount: 1 }) },
      401,
    ],
    [
      'an unsigned call (401)',
      { path: '/v1/customers/cus_1/spend', body: json({ amount: 1 }), headers: { 'x-billing-signature': 'v1=0' } },
      401,
    ],
    [
      'a text the services refuse (a NUL)',
      { path: '/v1/customers/cus_1/spend', body: json({ amount: 1, note: 'a\u0000b' }) },
      422,
    ],
    [
      'a refusal the route translates',
      { path: '/v1/customers/cus_1/spend', body: json({ amount: 1, note: 'too much' }) },
      402,
    ],
    [
      'a failure (500, nothing of it said)',
      { path: '/v1/customers/cus_1/spend', body: json({ amount: 1, note: 'crash' }) },
      500,
    ],
  ])('answers %s as express does, on the lane', async (_case, call, status) => {
    const before = await lanes(viaLane);
    const [express, lane] = [await send(viaExpress, call), await send(viaLane, call)];
    expect(answerOf(lane)).toEqual(answerOf(express));
    expect(lane.status).toBe(status);
    expect((await lanes(viaLane)) - before).toBe(1);
  });

  it('leaves other methods and paths to express', async () => {
    const before = await lanes(viaLane);
    const other = await send(viaLane, { path: '/v1/customers/cus_1/spend/more', body: json({ amount: 1 }) });
    expect(other.status).toBe(404);
    expect((await lanes(viaLane)) - before).toBe(0);
  });
});
