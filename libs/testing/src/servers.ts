import { createServer } from 'node:net';

/**
 * Suites that need a real server run when its URL is in the environment. Without it they are
 * skipped with a clear line on a developer's machine, and fail under CI=true, where the
 * servers are part of the contract.
 */
export type ServerKind = 'DATABASE_URL' | 'KAFKA_BROKERS' | 'REDIS_URL' | 'EVENTSTORE_URL';

export function serverUrl(kind: ServerKind): string | undefined {
  const value = process.env[kind]?.trim();
  return value ? value : undefined;
}

export function describeWithServer(kind: ServerKind, title: string, suite: (url: string) => void): void {
  const url = serverUrl(kind);
  if (url) {
    describe(title, () => suite(url));
    return;
  }
  if (process.env.CI === 'true') {
    describe(title, () => {
      it(`needs ${kind}`, () => {
        throw new Error(`${kind} is not set: under CI=true this suite must run against a real server`);
      });
    });
    return;
  }
  // eslint-disable-next-line no-console
  console.warn(`SKIPPED "${title}": set ${kind} to run it against a real server`);
  describe.skip(title, () => suite(''));
}

/** A unique, SQL-safe name for a schema or topic owned by one test file. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}

/** Polls until `check` stops throwing, or rethrows its last error after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T> | T, timeoutMs = 20000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}

/**
 * A loopback port that nothing listens on (yet): for a service that is down, then comes back.
 * Taken below the kernel's ephemeral range (32768 and up on Linux), which outgoing connections
 * draw from: a port from listen(0) could be handed to a client socket before the service binds it.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const server = createServer();
    const bound = await new Promise<boolean>((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    await new Promise((resolve) => server.close(resolve));
    return port;
  }
}
