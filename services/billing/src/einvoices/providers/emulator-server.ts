import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the providers' emulators share: a loopback HTTP server, and the failures a test queues
 * per path. `drop` acts on the request and closes the connection unanswered, `http500` acts and
 * answers HTTP 500, `refuse` answers the provider's own refusal without acting.
 */
export type EmulatedFailure = 'drop' | 'http500' | 'refuse';

export function failureQueue() {
  const failures = new Map<string, EmulatedFailure[]>();
  return {
    failNext: (path: string, how: EmulatedFailure) => void failures.set(path, [...(failures.get(path) ?? []), how]),
    /** The next failure queued for `path`, taken from the queue; undefined when none. */
    take: (path: string) => failures.get(path)?.shift(),
  };
}

/** After the request was acted on, loses the answer as `how` says; true when it did. */
export function loseAnswer(res: ServerResponse, how: EmulatedFailure | undefined): boolean {
  if (how === 'drop') {
    res.socket?.destroy();
    return true;
  }
  if (how === 'http500') {
    res.writeHead(500, { 'content-type': 'text/plain' }).end('emulated failure');
    return true;
  }
  return false;
}

/** Serves `handle` on a free loopback port; an error it throws answers HTTP 500 with its message. */
export async function serveLocally(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(error.message);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
