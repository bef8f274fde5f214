import { Client, type PoolConfig } from 'pg';

/** A lock this process holds until it releases it, or until it is lost with its connection. */
export interface HeldLock {
  /** Resolves when the lock may have gone to another process: stop the work it guards at once. */
  readonly lost: Promise<void>;
  release(): Promise<void>;
}

/** How often the holder checks that its connection still answers, and how long it waits for the answer. */
const CHECK_INTERVAL_MS = 1000;

/**
 * Tries to take the session-level advisory lock `name` on a connection of its own. The server
 * releases it when that connection ends: on `release`, or when the holding process dies (its
 * socket closes). TCP keepalives of a few seconds let the server also notice a holder that
 * vanished without closing anything. The holder, for its part, gives the lock up as lost the
 * moment its connection errs or stops answering, which it notices first.
 */
export async function tryAdvisoryLock(options: PoolConfig, name: string): Promise<HeldLock | undefined> {
  const client = new Client({ ...options, keepAlive: true });
  let lose: () => void = () => undefined;
  const lost = new Promise<void>((resolve) => (lose = resolve));
  client.on('error', () => lose());
  client.on('end', () => lose());
  try {
    await client.connect();
    await client.query('SET tcp_keepalives_idle = 3; SET tcp_keepalives_interval = 1; SET tcp_keepalives_count = 3');
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [
      name,
    ]);
    if (!rows[0]?.locked) {
      await client.end();
      return undefined;
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  const checking = setInterval(() => {
    answersWithin(client, CHECK_INTERVAL_MS).then((answers) => {
      if (!answers) lose();
    });
  }, CHECK_INTERVAL_MS);
  checking.unref();
  void lost.then(() => {
    clearInterval(checking);
    void client.end().catch(() => undefined);
  });
  return {
    lost,
    // Ending the session releases every lock it holds.
    release: async () => {
      clearInterval(checking);
      await client.end().catch(() => undefined);
    },
  };
}

function answersWithin(client: Client, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const answer = client.query('SELECT 1').then(
    () => true,
    () => false,
  );
  return Promise.race([answer, timeout]).finally(() => clearTimeout(timer));
}
