import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The shared jest setup's `fetch` (jest.fetch-dispatcher.js): an idle connection lives about 1 s. */
describe("the tests' fetch", () => {
  it('closes an idle connection itself, long before the server keep-alive of 10 s would', async () => {
    const server = createServer((_req, res) => res.end('ok'));
    server.keepAliveTimeout = 10_000;
    // The server closes an idle connection only after 10 s: a close seen before that is the client's.
    const closed = new Promise<number>((resolve) =>
      server.once('connection', (socket) => socket.once('close', () => resolve(performance.now()))),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    let timer: NodeJS.Timeout | undefined;
    try {
      expect(await (await fetch(url)).text()).toBe('ok');
      const answered = performance.now();
      const timedOut = new Promise<number>((resolve) => {
        timer = setTimeout(() => resolve(Number.POSITIVE_INFINITY), 6000);
      });
      // Node's own fetch keeps it until 2 s before the server's timeout: 8 s.
      expect((await Promise.race([closed, timedOut])) - answered).toBeLessThan(6000);
    } finally {
      clearTimeout(timer);
      server.closeAllConnections();
      server.close();
    }
  });
});
