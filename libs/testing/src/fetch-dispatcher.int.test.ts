import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The shared jest setup's `fetch` (jest.fetch-dispatcher.js): idle connections live 1 s at most. */
describe("the tests' fetch", () => {
  it('opens a new connection after one has been idle for over a second, well inside the server keep-alive', async () => {
    let connections = 0;
    const server = createServer((_req, res) => res.end('ok'));
    server.keepAliveTimeout = 10_000;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const get = async () => expect(await (await fetch(url)).text()).toBe('ok');
      const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
      await get();
      await pause(100);
      await get();
      const inUse = connections;
      await pause(100);
      await get();
      expect(connections).toBe(inUse); // kept alive while in use
      await pause(1500);
      await get();
      expect(connections).toBe(inUse + 1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
