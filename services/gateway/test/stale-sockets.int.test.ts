import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Request } from 'express';
import { createApp, createLogger, SERVICE_KEEP_ALIVE_TIMEOUT_MS, startService } from '@billing/service';
import { createUpstream, UPSTREAM_FREE_SOCKET_TIMEOUT_MS, type UpstreamHandler } from '../src/upstream';

jest.setTimeout(180_000);

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const close = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/**
 * A service that closes every connection a moment after answering, while its answers still
 * offer keep-alive: the gateway's next request on that socket meets a reset, as it did with a
 * service whose keep-alive timeout ran out just as the gateway reused its socket.
 */
function closingService(): Server {
  const app = express();
  app.get('/ok', (_req, res) => void res.json({ ok: true }));
  app.post('/echo', express.json(), (req, res) => void res.status(201).json({ body: req.body as unknown }));
  const server = http.createServer(app);
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.once('finish', () => setTimeout(() => req.socket.destroy(), Math.random() * 3));
  });
  return server;
}

/** What the gateway's idempotency check does for public POSTs: the body read ahead, to be sent as it came. */
const readAhead = async (req: Request & { rawBody?: Buffer }, _res: unknown, next: () => void) => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  req.rawBody = Buffer.concat(chunks);
  next();
};

/**
 * Issue 26, item 10: about 5 in 800 requests through the gateway answered 503 because the
 * keep-alive socket they were sent on had just been closed by the service (ECONNRESET). A
 * request that fails that way, on a reused socket before any byte of its answer, with its body
 * at hand, is sent once more on a new connection (a POST only with an Idempotency-Key): none of
 * 800 may answer 503, and a POST without a key is never done twice.
 */
describe('the forwarder on keep-alive sockets that the service closes', () => {
  let service: Server;
  let gateway: Server;
  let upstream: UpstreamHandler;
  let gatewayUrl: string;
  /** Why each 503 was answered (the error's code), to name the cause when one appears. */
  const failures: string[] = [];

  beforeAll(async () => {
    service = closingService();
    // A read's timeout far above any answer's time, also on a loaded machine: a 503 here can only
    // come from a reset socket, which is what this suite is about (CI once saw four GETs of 800
    // answer 503 while the run took seven times its usual time).
    upstream = createUpstream({
      name: 'closing',
      target: await listen(service),
      timeoutMs: 60_000,
      onError: (error, req) => failures.push(`${req.method} ${(error as { code?: string }).code ?? error.message}`),
    });
    const app = express();
    app.post('/echo', readAhead, upstream);
    app.get('/ok', upstream);
    gateway = http.createServer(app);
    gatewayUrl = await listen(gateway);
  });
  afterAll(async () => {
    await upstream?.close();
    await close(gateway);
    await close(service);
  });

  it('answers none of 800 requests (GETs and POSTs, 16 at a time) with 503', async () => {
    const statuses = new Map<number, number>();
    let next = 0;
    const worker = async () => {
      while (next < 800) {
        const n = next++;
        const response =
          n % 2 === 0
            ? await fetch(`${gatewayUrl}/ok`)
            : await fetch(`${gatewayUrl}/echo`, {
                method: 'POST',
                headers: { 'content-type': 'application/json', 'idempotency-key': `echo-${n}` },
                body: JSON.stringify({ n }),
              });
        await response.arrayBuffer();
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: 16 }, worker));
    expect({ statuses: Object.fromEntries(statuses), failures }).toEqual({
      statuses: { 200: 400, 201: 400 },
      failures: [],
    });
  });

  it('never sends twice a POST without an Idempotency-Key whose service died after doing it', async () => {
    // A service that keeps its connections, and whose POST does what it was asked, then dies
    // before answering: the gateway's reused socket is reset with nothing answered.
    let effects = 0;
    const dying = express();
    dying.get('/ok', (_req, res) => void res.json({ ok: true }));
    dying.post('/effect', (_req, res) => {
      effects++;
      res.socket?.destroy();
    });
    const service = http.createServer(dying);
    const forward = createUpstream({ name: 'dying', target: await listen(service), timeoutMs: 5000 });
    const front = express();
    front.get('/ok', forward);
    front.post('/effect', readAhead, forward);
    const gateway = http.createServer(front);
    const url = await listen(gateway);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const stop = async () => {
      agent.destroy();
      await forward.close();
      await close(gateway);
      await close(service);
    };
    const call = (method: string, path: string) =>
      new Promise<number>((resolve, reject) => {
        const req = http.request(`${url}${path}`, { method, agent }, (res) => {
          res.resume();
          res.once('end', () => resolve(res.statusCode ?? 0));
        });
        req.once('error', reject);
        req.end(method === 'POST' ? '{}' : undefined);
      });
    try {
      for (let round = 0; round < 20; round++) {
        // A GET first, so that the POST goes out on a socket the gateway reuses.
        await call('GET', '/ok');
        const before = effects;
        expect(await call('POST', '/effect')).toBeGreaterThanOrEqual(500);
        expect(effects - before).toBe(1);
      }
    } finally {
      await stop();
    }
  });

  it('closes an idle pooled socket well before a service would close it', async () => {
    const logger = createLogger('keep-alive', { level: 'silent' });
    const started = await startService({ app: createApp({ name: 'keep-alive', logger }), port: 0, logger });
    try {
      expect(started.server.keepAliveTimeout).toBe(SERVICE_KEEP_ALIVE_TIMEOUT_MS);
      expect(UPSTREAM_FREE_SOCKET_TIMEOUT_MS).toBeLessThanOrEqual(SERVICE_KEEP_ALIVE_TIMEOUT_MS - 1000);
    } finally {
      await started.shutdown();
    }
  });
});
