import type { AddressInfo } from 'node:net';
import http, { type Server } from 'node:http';
import express, { type Express } from 'express';
import { eventually } from '@billing/testing';
import { type ForwardedRequest, createUpstream, type UpstreamHandler, type UpstreamOptions } from '../src/upstream';

interface Started {
  server: Server;
  port: number;
  url: string;
  close(): Promise<void>;
}

async function start(app: Express, port = 0): Promise<Started> {
  const server = app.listen(port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const actual = (server.address() as AddressInfo).port;
  return {
    server,
    port: actual,
    url: `http://127.0.0.1:${actual}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on: taken from the OS, then released. */
async function closedPort(): Promise<number> {
  const probe = await start(express());
  await probe.close();
  return probe.port;
}

interface Hit {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
}

/** The internal service behind the gateway. */
function upstreamApp(hits: Hit[], events: string[] = []): Express {
  const app = express();
  app.use((req, _res, next) => {
    hits.push({ method: req.method, url: req.originalUrl, headers: req.headers });
    next();
  });
  app.get('/echo', (req, res) => void res.json({ method: req.method, url: req.originalUrl, query: req.query }));
  app.post('/echo', express.json(), (req, res) => void res.status(201).json({ body: req.body as unknown }));
  app.post('/raw', express.text(), (req, res) => void res.json({ text: req.body as unknown }));
  app.post('/bytes', express.raw({ type: () => true }), (req, res) => {
    res.json({ bytes: (req.body as Buffer).toString('utf8'), length: req.get('content-length') ?? null });
  });
  app.get('/socket', (req, res) => void res.json({ port: req.socket.remotePort, headers: req.headers }));
  app.get('/headers', (req, res) => void res.json({ headers: req.headers }));
  app.get(
    '/missing',
    (_req, res) => void res.status(404).json({ error: { code: 'not_found', message: 'no such thing' } }),
  );
  app.get('/busy', (_req, res) => void res.status(503).set('x-upstream', 'yes').json({ upstream: 'busy' }));
  app.get('/boom', (_req, res) => void res.status(500).json({ error: { code: 'internal_error', message: 'bug' } }));
  // Fails (or hangs) only for the tenants named in `x-fail` / `x-hang`: input only they send.
  app.get('/tenant', (req, res) => {
    if (req.get('x-hang') === req.get('x-tenant')) {
      req.once('close', () => events.push('tenant: hang closed'));
      return;
    }
    if (req.get('x-fail') === req.get('x-tenant')) return void res.status(503).json({ upstream: 'failed' });
    res.json({ tenant: req.get('x-tenant') });
  });
  app.get('/hang', (req) => {
    req.once('close', () => events.push('hang: connection closed'));
  });
  app.get('/stall', (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{"partial":');
    res.once('close', () => events.push('stall: connection closed'));
  });
  app.get('/slow', (_req, res) => {
    res.once('close', () => events.push(`slow: closed, finished=${res.writableFinished}`));
    setTimeout(() => {
      if (!res.destroyed) res.json({ late: true });
    }, 400);
  });
  return app;
}

/** The gateway: JSON parsed before the proxy, as on most gateway routes; text/plain streamed. */
function gatewayApp(upstream: UpstreamHandler): Express {
  const app = express();
  app.use(express.json());
  app.use(upstream);
  return app;
}

interface ErrorBody {
  error: { code: string; message: string };
}

async function timed(request: Promise<Response>): Promise<{ response: Response; ms: number }> {
  const started = Date.now();
  const response = await request;
  return { response, ms: Date.now() - started };
}

/**
 * An open breaker's 503 comes at once, where a call to a failing service would wait out its
 * 1.5 s timeout. Bounded well under that, not at 100 ms: CI's four suites at once on two cores
 * once took 132 ms to answer it.
 */
const AT_ONCE_MS = 500;

/**
 * Until the upstream's breaker is half-open and this client's own breaker lets a trial through:
 * a refused connection counts against the client's breaker too, which opened a moment after the
 * upstream's, and until its reset timer runs out as well it would refuse the trial before it
 * reached the upstream's half-open breaker (on a busy machine, a 503).
 */
async function untilATrialCanPass(upstream: ReturnType<typeof createUpstream>): Promise<void> {
  const mine = () => upstream.callerBreaker('ip:127.0.0.1') ?? upstream.callerBreaker('ip:::ffff:127.0.0.1');
  await eventually(() => {
    expect(upstream.breaker.halfOpen).toBe(true);
    expect(mine()?.opened ?? false).toBe(false);
  }, 2000);
}

describe('createUpstream', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function setUp(options: Partial<UpstreamOptions> & { port?: number; target?: string } = {}) {
    const hits: Hit[] = [];
    const events: string[] = [];
    let service: Started | undefined;
    if (!options.target) {
      service = await start(upstreamApp(hits, events), options.port);
      const running = service;
      cleanup.push(() => running.close());
    }
    const upstream = createUpstream({ name: 'catalog', target: options.target ?? service!.url, ...options });
    cleanup.push(() => upstream.close());
    const gateway = await start(gatewayApp(upstream));
    cleanup.push(() => gateway.close());
    return { hits, events, service, upstream, gateway };
  }

  it('forwards a GET with its query string', async () => {
    const { gateway, hits } = await setUp();
    const response = await fetch(`${gateway.url}/echo?limit=5&starting_after=cus_1`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      method: 'GET',
      url: '/echo?limit=5&starting_after=cus_1',
      query: { limit: '5', starting_after: 'cus_1' },
    });
    expect(hits).toHaveLength(1);
  });

  it('forwards a JSON body that express.json() already parsed', async () => {
    const { gateway } = await setUp();
    const body = { name: 'Ada', metadata: { plan: 'pro', seats: 3 }, note: 'ünïcödé' };
    const response = await fetch(`${gateway.url}/echo`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(201);
    expect(await response.json()).toEqual({ body });
  });

  it('reads a body that no parser consumed, hands its bytes to onProxyReq and sends them', async () => {
    const signed: string[] = [];
    const { gateway } = await setUp({ onProxyReq: (_proxyReq, _req, body) => void signed.push(body.toString()) });
    const response = await fetch(`${gateway.url}/raw`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'plain text body',
    });
    expect(await response.json()).toEqual({ text: 'plain text body' });
    expect(signed).toEqual(['plain text body']);
  });

  it('answers 413 in the envelope for an unread body over 1 MB, without calling the upstream', async () => {
    const { gateway, hits } = await setUp();
    const response = await fetch(`${gateway.url}/raw`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'x'.repeat(1024 * 1024 + 1),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(hits).toEqual([]);
  });

  it('sends a body read ahead of it (rawBody) byte for byte, not re-serialised', async () => {
    const hits: Hit[] = [];
    const service = await start(upstreamApp(hits));
    cleanup.push(() => service.close());
    const upstream = createUpstream({ name: 'catalog', target: service.url });
    cleanup.push(() => upstream.close());
    const app = express();
    // As the idempotency check does: reads the body, keeps its bytes, and parses it.
    app.use(async (req, _res, next) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      Object.assign(req, { rawBody: Buffer.concat(chunks), body: JSON.parse(Buffer.concat(chunks).toString()) });
      next();
    });
    app.use(upstream);
    const gateway = await start(app);
    cleanup.push(() => gateway.close());
    const sent = '{ "name":"Ada",\n  "name": "Bob", "n": 1.50 }';
    const response = await fetch(`${gateway.url}/bytes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: sent,
    });
    expect(await response.json()).toEqual({ bytes: sent, length: String(Buffer.byteLength(sent)) });
  });

  it('drops hop-by-hop headers, keeps its upstream connection alive, and forwards the request id', async () => {
    const hits: Hit[] = [];
    const service = await start(upstreamApp(hits));
    cleanup.push(() => service.close());
    const upstream = createUpstream({ name: 'catalog', target: service.url });
    cleanup.push(() => upstream.close());
    const app = express();
    app.use((_req, res, next) => {
      res.locals.requestId = 'req_gateway_1';
      next();
    });
    app.use(upstream);
    const gateway = await start(app);
    cleanup.push(() => gateway.close());
    // A client that closes its own connection each time, naming a header meant for this hop only.
    const call = () =>
      new Promise<{ port: number; headers: Record<string, string> }>((resolve, reject) => {
        const request = http.get(
          `${gateway.url}/socket`,
          { agent: false, headers: { connection: 'close, x-hop', 'x-hop': 'for the gateway', 'keep-alive': '5' } },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
          },
        );
        request.on('error', reject);
      });
    const first = await call();
    const second = await call();
    expect(first.headers).not.toHaveProperty('x-hop');
    expect(first.headers).not.toHaveProperty('keep-alive');
    expect(first.headers['connection']).not.toMatch(/close/);
    expect(first.headers['x-request-id']).toBe('req_gateway_1');
    // One pooled connection served both, though the client closed its own each time.
    expect(second.port).toBe(first.port);
  });

  it('sends the headers that onProxyReq sets', async () => {
    const { gateway } = await setUp({
      onProxyReq: (proxyReq, req) => {
        proxyReq.setHeader('x-billing-organization', 'org_1');
        proxyReq.setHeader('x-seen-path', req.originalUrl ?? req.url);
      },
    });
    const response = await fetch(`${gateway.url}/headers`, { headers: { 'x-client': 'kept' } });
    const { headers } = (await response.json()) as { headers: Record<string, string> };
    expect(headers).toMatchObject({
      'x-billing-organization': 'org_1',
      'x-seen-path': '/headers',
      'x-client': 'kept',
      'x-forwarded-for': '127.0.0.1',
    });
  });

  it("keeps the caller's credentials from the service: the gateway vouches for the caller instead", async () => {
    const { gateway } = await setUp({});
    const response = await fetch(`${gateway.url}/headers`, {
      headers: { authorization: 'Bearer sk_test_secret', cookie: 'session=abc', 'x-client': 'kept' },
    });
    const { headers } = (await response.json()) as { headers: Record<string, string> };
    expect(headers['x-client']).toBe('kept');
    expect(headers).not.toHaveProperty('authorization');
    expect(headers).not.toHaveProperty('cookie');
  });

  it('applies pathRewrite, e.g. to forward the full path under a mount point', async () => {
    const hits: Hit[] = [];
    const service = await start(upstreamApp(hits));
    cleanup.push(() => service.close());
    const upstream = createUpstream({
      name: 'catalog',
      target: service.url,
      pathRewrite: (_path, req) => req.originalUrl ?? req.url,
    });
    cleanup.push(() => upstream.close());
    const app = express();
    app.use('/v1/products', upstream);
    const gateway = await start(app);
    cleanup.push(() => gateway.close());

    await fetch(`${gateway.url}/v1/products/prod_1?expand=prices`);
    expect(hits.map((hit) => hit.url)).toEqual(['/v1/products/prod_1?expand=prices']);
  });

  it('passes an upstream 404 through unchanged, without counting it against the breaker', async () => {
    const { gateway, upstream } = await setUp();
    for (let i = 0; i < 8; i++) {
      const response = await fetch(`${gateway.url}/missing`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: { code: 'not_found', message: 'no such thing' } });
    }
    expect(upstream.breaker.opened).toBe(false);
    expect(upstream.breaker.stats.failures).toBe(0);
  });

  it("passes an upstream 503 through unchanged but counts it as a failure of the caller's breaker", async () => {
    const { gateway, upstream } = await setUp();
    const response = await fetch(`${gateway.url}/busy`);
    expect(response.status).toBe(503);
    expect(response.headers.get('x-upstream')).toBe('yes');
    expect(await response.json()).toEqual({ upstream: 'busy' });
    // Without callerOf the caller is the client's address; one caller's 503 is not the upstream's.
    expect(upstream.callerBreaker('ip:127.0.0.1')?.stats.failures).toBe(1);
    expect(upstream.breaker.stats.failures).toBe(0);
  });

  it('passes an upstream 500 through without counting it against anyone', async () => {
    const { gateway, upstream } = await setUp();
    for (let i = 0; i < 8; i++) expect((await fetch(`${gateway.url}/boom`)).status).toBe(500);
    expect(upstream.callerBreaker('ip:127.0.0.1')?.stats.failures).toBe(0);
    expect(upstream.breaker.stats.failures).toBe(0);
    expect(upstream.callerBreaker('ip:127.0.0.1')?.opened).toBe(false);
  });

  it('answers 503 in the error envelope within 2 s when the upstream refuses connections', async () => {
    const { gateway } = await setUp({ target: `http://127.0.0.1:${await closedPort()}` });
    const { response, ms } = await timed(fetch(`${gateway.url}/echo`));
    expect(ms).toBeLessThan(2000);
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: { code: 'service_unavailable', message: 'catalog is unavailable' },
    });
  });

  it('answers 503 within 2 s when the upstream never answers, and aborts the upstream request', async () => {
    const { gateway, events } = await setUp({ timeoutMs: 300 });
    const { response, ms } = await timed(fetch(`${gateway.url}/hang`));
    expect(ms).toBeLessThan(2000);
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(response.status).toBe(503);
    expect(((await response.json()) as ErrorBody).error.code).toBe('service_unavailable');
    await eventually(() => expect(events).toContain('hang: connection closed'), 2000);
  });

  it('uses the default timeout of 1.5 s when none is given', async () => {
    const { gateway } = await setUp();
    const { response, ms } = await timed(fetch(`${gateway.url}/hang`));
    expect(response.status).toBe(503);
    expect(ms).toBeGreaterThanOrEqual(1400);
    expect(ms).toBeLessThan(2000);
  });

  it('never lets a late upstream answer reach a client that already got 503', async () => {
    const { gateway, events } = await setUp({ timeoutMs: 150 });
    const response = await fetch(`${gateway.url}/slow`);
    expect(response.status).toBe(503);
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({ error: { code: 'service_unavailable', message: 'catalog is unavailable' } });
    // The upstream request was aborted, so its late answer had nowhere to go.
    await eventually(() => expect(events).toEqual(['slow: closed, finished=false']), 2000);
    await new Promise((resolve) => setTimeout(resolve, 400));
    // The gateway is still healthy afterwards.
    expect((await fetch(`${gateway.url}/echo`)).status).toBe(200);
  });

  it('cuts the client off when the upstream stalls in the middle of its body', async () => {
    const { gateway, events } = await setUp({ timeoutMs: 300 });
    const started = Date.now();
    const response = await fetch(`${gateway.url}/stall`);
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(2000);
    await eventually(() => expect(events).toContain('stall: connection closed'), 2000);
  });

  it('opens after failures, answers 503 at once without calling the upstream, and recovers after resetTimeout', async () => {
    const { gateway, upstream, service, hits } = await setUp({ resetTimeoutMs: 800 });
    const port = service!.port;
    const app = upstreamApp(hits);

    // The service goes down: connections are refused and count as failures.
    await service!.close();
    for (let i = 0; i < 5; i++) expect((await fetch(`${gateway.url}/echo`)).status).toBe(503);
    expect(upstream.breaker.opened).toBe(true);

    // It comes back on the same port, but the breaker is open: 503 at once, the service is not called.
    const revived = await start(app, port);
    cleanup.push(() => revived.close());
    hits.length = 0;
    const { response, ms } = await timed(fetch(`${gateway.url}/echo`));
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({
      error: { code: 'service_unavailable', message: 'catalog is unavailable' },
    });
    expect(ms).toBeLessThan(AT_ONCE_MS);
    expect(hits).toHaveLength(0);

    // After resetTimeout the breaker half-opens, lets a trial through, and closes on success.
    await untilATrialCanPass(upstream);
    expect((await fetch(`${gateway.url}/echo?after=reset`)).status).toBe(200);
    expect(upstream.breaker.closed).toBe(true);
    expect(hits.map((hit) => hit.url)).toEqual(['/echo?after=reset']);
    expect((await fetch(`${gateway.url}/echo`)).status).toBe(200);
  });

  it('opens again when the half-open trial fails', async () => {
    const { gateway, upstream } = await setUp({
      target: `http://127.0.0.1:${await closedPort()}`,
      resetTimeoutMs: 300,
    });
    // States are recorded as they change: the 300 ms reset timer may move the breaker on before
    // the test reads its state, on a busy machine.
    const states: string[] = [];
    upstream.breaker.on('open', () => states.push('open'));
    upstream.breaker.on('halfOpen', () => states.push('halfOpen'));
    upstream.breaker.on('close', () => states.push('close'));
    for (let i = 0; i < 5; i++) await fetch(`${gateway.url}/echo`);
    expect(states[0]).toBe('open');
    await untilATrialCanPass(upstream);
    expect((await fetch(`${gateway.url}/echo`)).status).toBe(503);
    // The breaker counts the trial's failure as the upstream's answer ends, which can come after
    // the client has its 503 on a busy machine.
    await eventually(() => expect(states.slice(0, 3)).toEqual(['open', 'halfOpen', 'open']), 2000);
    expect(states).not.toContain('close');
  });

  it('does not count a client that gives up as an upstream failure', async () => {
    const { gateway, upstream, events } = await setUp({ timeoutMs: 1000 });
    const controller = new AbortController();
    const request = fetch(`${gateway.url}/hang`, { signal: controller.signal });
    await eventually(() => expect(upstream.breaker.stats.fires).toBe(1), 2000);
    controller.abort();
    await expect(request).rejects.toThrow();
    await eventually(() => expect(events).toContain('hang: connection closed'), 2000);
    expect(upstream.breaker.stats.failures).toBe(0);
  });

  describe('with one breaker per tenant (callerOf)', () => {
    const tenantOf = (req: ForwardedRequest) => `tenant:${req.headers['x-tenant'] ?? 'none'}`;
    const asTenant = (gateway: Started, tenant: string, headers: Record<string, string> = {}) =>
      fetch(`${gateway.url}/tenant`, { headers: { 'x-tenant': tenant, ...headers } });

    it("lets a tenant whose requests fail open only its own breaker: another tenant's 40 requests all pass", async () => {
      // Open breakers stay open for the whole loop: with the 1 s default a busy machine, slower than
      // 80 requests a second, let the hostile tenant's trial request (half-open) through.
      const { gateway, upstream, hits } = await setUp({ callerOf: tenantOf, resetTimeoutMs: 60_000 });
      const hostile: number[] = [];
      const victim: number[] = [];
      for (let i = 0; i < 40; i++) {
        hostile.push((await asTenant(gateway, 'hostile', { 'x-fail': 'hostile' })).status);
        victim.push((await asTenant(gateway, 'victim')).status);
      }
      expect(victim).toEqual(Array(40).fill(200));
      expect(hostile.every((status) => status === 503)).toBe(true);
      expect(upstream.callerBreaker('tenant:hostile')?.opened).toBe(true);
      expect(upstream.breaker.opened).toBe(false);
      // Open, the hostile tenant's requests no longer reach the service.
      expect(hits.filter((hit) => hit.headers['x-tenant'] === 'hostile')).toHaveLength(5);
    });

    it("does not let one tenant's timeouts open the breaker for the others", async () => {
      // The victim's requests are held to the same timeout as the hostile one's hangs: with 150 ms
      // a loaded CI run answered one of them 503 (the upstream took longer than that to answer).
      const { gateway, upstream, events } = await setUp({ callerOf: tenantOf, timeoutMs: 1000 });
      const victim: number[] = [];
      for (let i = 0; i < 8; i++) {
        const [hung, served] = await Promise.all([
          asTenant(gateway, 'hostile', { 'x-hang': 'hostile' }),
          asTenant(gateway, 'victim'),
        ]);
        expect(hung.status).toBe(503);
        victim.push(served.status);
      }
      expect(victim).toEqual(Array(8).fill(200));
      expect(upstream.callerBreaker('tenant:hostile')?.opened).toBe(true);
      expect(upstream.breaker.opened).toBe(false);
      await eventually(() => expect(events.filter((event) => event === 'tenant: hang closed')).toHaveLength(5), 2000);
    });

    it('opens for every tenant, fast, when many tenants fail at once', async () => {
      const { gateway, upstream, hits } = await setUp({ callerOf: tenantOf });
      const tenants = ['a', 'b', 'c', 'd', 'e', 'f'];
      for (let round = 0; round < 5 && !upstream.breaker.opened; round++) {
        for (const tenant of tenants) await asTenant(gateway, tenant, { 'x-fail': tenant });
      }
      expect(upstream.breaker.opened).toBe(true);
      hits.length = 0;
      const { response, ms } = await timed(asTenant(gateway, 'newcomer'));
      expect(response.status).toBe(503);
      expect(((await response.json()) as ErrorBody).error.code).toBe('service_unavailable');
      expect(ms).toBeLessThan(AT_ONCE_MS);
      expect(hits).toHaveLength(0);
    });

    it('opens for every tenant when the service is down, whichever tenant found out', async () => {
      const { gateway, upstream, service, hits } = await setUp({ callerOf: tenantOf });
      await service!.close();
      for (let i = 0; i < 5; i++) expect((await asTenant(gateway, 'first')).status).toBe(503);
      expect(upstream.breaker.opened).toBe(true);
      const revived = await start(upstreamApp(hits), service!.port);
      cleanup.push(() => revived.close());
      const { response, ms } = await timed(asTenant(gateway, 'another'));
      expect(response.status).toBe(503);
      expect(ms).toBeLessThan(AT_ONCE_MS);
      expect(hits).toHaveLength(0);
    });
  });

  it('answers 503 after close()', async () => {
    const { gateway, upstream } = await setUp();
    await upstream.close();
    const response = await fetch(`${gateway.url}/echo`);
    expect(response.status).toBe(503);
  });
});
