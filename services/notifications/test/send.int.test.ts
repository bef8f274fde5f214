import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { createWebhookSender } from '../src/deliveries/send';
import { signWebhook } from '../src/deliveries/sign';

/**
 * An endpoint that closes a kept-alive connection just as the next webhook arrives on it (its
 * keep-alive timeout meeting the request): what Node's agent meets on a loaded machine, where a
 * delivery failed with ECONNRESET and waited minutes for its retry.
 */
async function endpoint(closesReused: boolean) {
  const requestsPerSocket = new Map<Socket, number>();
  let answered = 0;
  let connections = 0;
  const server = http.createServer((req, res) => {
    const count = (requestsPerSocket.get(req.socket) ?? 0) + 1;
    requestsPerSocket.set(req.socket, count);
    if (count > 1 ? closesReused : !closesReused) return void req.socket.destroy();
    req.resume();
    req.on('end', () => {
      answered++;
      res.end('ok');
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    url,
    counts: () => ({ answered, connections }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    server,
  };
}

describe('sending a webhook on a pooled connection', () => {
  const sender = createWebhookSender({ timeoutMs: 5000, policy: { privateTargetsAllowedIn: ['SANDBOX'] } });
  afterAll(() => sender.close());
  const body = JSON.stringify({ type: 'invoice.paid' });
  const send = (url: string) => sender.send(url, 'SANDBOX', body, signWebhook('whsec_test', 'evt_1', 1, body));

  it('given the endpoint closes the kept-alive connection as the next webhook comes, sends it once more on a new one', async () => {
    const hook = await endpoint(true);
    try {
      expect((await send(hook.url)).responseStatus).toBe(200);
      const second = await send(hook.url);
      expect([second.responseStatus, second.error]).toEqual([200, null]);
      expect(hook.counts()).toEqual({ answered: 2, connections: 2 });
    } finally {
      hook.server.closeAllConnections();
      await hook.close();
    }
  });

  it('given a new connection closed before an answer, does not send again: the attempt failed', async () => {
    const hook = await endpoint(false);
    try {
      const attempt = await send(hook.url);
      expect(attempt.responseStatus).toBeNull();
      expect(attempt.error).toMatch(/^connection error: ECONNRESET/);
      expect(hook.counts()).toEqual({ answered: 0, connections: 1 });
    } finally {
      hook.server.closeAllConnections();
      await hook.close();
    }
  });
});
