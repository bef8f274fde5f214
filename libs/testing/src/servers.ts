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

/** A loopback port that nothing listens on (yet): for a service that is down, then comes back. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
