import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express, { type Express } from 'express';
import { type Infrastructure, type ServiceUnderTest, testInfrastructure } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { type LateAnswer, createUpstream, type UpstreamHandler } from '../src/upstream';
import { clientOf, startGateway } from '../src/testing';

jest.setTimeout(60000);

async function listen(app: Express): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A service that answers after `delay` ms (per path), counting what it received and noticing
 * connections the gateway gave up on.
 */
function slowService(delays: Record<string, number>) {
  const seen: string[] = [];
  const abandoned: string[] = [];
  const app = express();
  app.use(express.json());
  app.use((req, res) => {
    seen.push(`${req.method} ${req.path}`);
    const delay = delays[req.path] ?? 0;
    let answered = false;
    res.once('close', () => {
      if (!answered) abandoned.push(`${req.method} ${req.path}`);
    });
    if (delay < 0) return; // never answers
    setTimeout(() => {
      answered = true;
      res
        .status(req.method === 'POST' ? 201 : 200)
        .json({ id: `obj_${seen.length}`, path: req.path, body: req.body as unknown });
    }, delay);
  });
  return { app, seen, abandoned };
}

/**
 * Issue 12, part 5: the gateway's timeout must not report a write that may have committed as
 * failed. Writes wait longer than reads, and a write past its timeout answers
 * `504 gateway_timeout` saying how to learn the outcome (docs/decisions/0005).
 */
describe('write timeouts at the upstream', () => {
  let service: Awaited<ReturnType<typeof listen>>;
  let slow: ReturnType<typeof slowService>;
  let upstream: UpstreamHandler;
  let gateway: Awaited<ReturnType<typeof listen>>;
  let late: LateAnswer[];
  let awaitLate: boolean;

  // Each answer lies at least 600 ms from the timeout it is measured against (medium: 400 ms,
  // read timeout 100 ms, write timeout 1000 ms; slow: 2000 ms), so a busy machine's timer jitter
  // cannot move an answer across its timeout.
  beforeEach(async () => {
    slow = slowService({ '/quick': 0, '/medium': 400, '/slow': 2000, '/never': -1 });
    service = await listen(slow.app);
    late = [];
    awaitLate = false;
    upstream = createUpstream({
      name: 'slowpoke',
      target: service.url,
      timeoutMs: 100,
      writeTimeoutMs: 1000,
      lateAnswerMs: 3000,
      awaitLateAnswer: () =>
        awaitLate ? (answer) => void late.push(answer ?? { status: 0, headers: {}, body: '' }) : undefined,
    });
    const app = express();
    app.use(upstream);
    gateway = await listen(app);
  });
  afterEach(async () => {
    await gateway.close();
    await upstream.close();
    await service.close();
  });

  const call = async (method: string, path: string) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: method === 'GET' ? undefined : JSON.stringify({ n: 1 }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };

  it('gives writes a longer timeout than reads', async () => {
    expect((await call('GET', '/medium')).status).toBe(503);
    for (const method of ['POST', 'PATCH', 'DELETE']) {
      expect(await call(method, '/medium')).toMatchObject({ status: method === 'POST' ? 201 : 200 });
    }
  });

  it('answers a write past its timeout 504 gateway_timeout, saying the write may still be applied', async () => {
    const started = Date.now();
    const timedOut = await call('PATCH', '/slow');
    expect(Date.now() - started).toBeLessThan(2000);
    expect(timedOut).toEqual({
      status: 504,
      body: {
        error: {
          code: 'gateway_timeout',
          message: expect.stringMatching(
            /slowpoke did not answer within 1000 ms; the request may still be applied.*Read the resource/,
          ),
        },
      },
    });
    // Nobody wants the answer: the upstream request is dropped, as before.
    await eventually(async () => expect(slow.abandoned).toEqual(['PATCH /slow']));
  });

  it('keeps a timed-out write running when its answer is awaited, and hands the answer over', async () => {
    awaitLate = true;
    const timedOut = await call('POST', '/slow');
    expect(timedOut.status).toBe(504);
    expect(timedOut.body.error.message).toMatch(/Retry with the same Idempotency-Key/);
    await eventually(async () => expect(late).toHaveLength(1));
    expect(late[0]).toMatchObject({
      status: 201,
      headers: { 'content-type': expect.stringContaining('application/json') },
    });
    expect(JSON.parse(late[0]!.body)).toMatchObject({ path: '/slow', body: { n: 1 } });
    expect(slow.abandoned).toEqual([]);
  });

  it('tells the awaiting side when no answer comes within the late window', async () => {
    awaitLate = true;
    expect((await call('POST', '/never')).status).toBe(504);
    await eventually(async () => expect(late).toEqual([{ status: 0, headers: {}, body: '' }]), 8000);
    await eventually(async () => expect(slow.abandoned).toEqual(['POST /never']));
  });

  it('still answers a read past its timeout 503', async () => {
    expect(await call('GET', '/slow')).toMatchObject({ status: 503, body: { error: { code: 'service_unavailable' } } });
  });
});

/**
 * Through the gateway: a POST that timed out keeps its Idempotency-Key claimed until the
 * service answers; a retry with the key gets 409 meanwhile and then the committed answer.
 */
describe('a timed-out POST through the gateway', () => {
  let infrastructure: Infrastructure;
  let gateway: ServiceUnderTest;
  let promotions: Awaited<ReturnType<typeof listen>>;
  let slow: ReturnType<typeof slowService>;
  let sk: string;

  beforeAll(async () => {
    slow = slowService({ '/v1/coupons': 900 });
    promotions = await listen(slow.app);
    infrastructure = await testInfrastructure('gateway-write-timeout');
    gateway = await startGateway(infrastructure, {
      PROMOTIONS_SERVICE_URL: promotions.url,
      UPSTREAM_WRITE_TIMEOUT_MS: '300',
    });
    const org = await clientOf(gateway.service.url).createOrganization();
    sk = org.api_keys.sandbox.secret_key;
  });
  afterAll(async () => {
    await gateway?.stop();
    await promotions?.close();
    await infrastructure?.close();
  });

  const post = async (key: string) => {
    const response = await fetch(`${gateway.service.url}/v1/coupons`, {
      method: 'POST',
      headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ name: 'Launch' }),
    });
    return {
      status: response.status,
      replay: response.headers.get('idempotency-replay'),
      key: response.headers.get('idempotency-key'),
      body: (await response.json()) as any,
    };
  };

  it('answers 504, then 409 while the write runs, then replays the answer the service gave', async () => {
    const timedOut = await post('key-timeout-1');
    expect(timedOut).toMatchObject({ status: 504, key: 'key-timeout-1', body: { error: { code: 'gateway_timeout' } } });
    expect(timedOut.body.error.message).toMatch(/Idempotency-Key/);

    const meanwhile = await post('key-timeout-1');
    expect(meanwhile).toMatchObject({ status: 409, body: { error: { code: 'conflict' } } });

    await sleep(900);
    const learned = await eventually(async () => {
      const retry = await post('key-timeout-1');
      expect(retry.status).toBe(201);
      return retry;
    });
    expect(learned).toMatchObject({ replay: 'true', body: { path: '/v1/coupons', body: { name: 'Launch' } } });
    // Ran once: the retries were answered by the gateway.
    expect(slow.seen).toEqual(['POST /v1/coupons']);
  });
});
