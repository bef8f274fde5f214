import { Client, type ClientConfig, Pool, type PoolConfig } from 'pg';
import { PgliteConnection } from './pglite-connection';
import { pipelinedTransaction, prepared } from './pipelined-transaction';
import { inMemoryPglite, pgliteIn } from './pglite-template';
import { type HeldLock, tryAdvisoryLock } from './session-lock';
import type { QueryResult, SqlExecutor, TransactionOptions } from './sql-executor';

export type { QueryResult, SqlExecutor, TransactionOptions };

/**
 * The one seam between our code and PostgreSQL. Two adapters share the same SQL: `pg` against
 * a server, and PGlite (PostgreSQL compiled to WebAssembly) embedded in the process.
 */
export interface Database extends SqlExecutor {
  readonly kind: 'postgres' | 'pglite';
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws.
   * `firstStatement` (no parameters) runs right after BEGIN, before anything of `fn`; on
   * PostgreSQL it travels with BEGIN in one round trip.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T>;
  /** Several statements at once, without parameters (schema set-up). */
  exec(sql: string): Promise<void>;
  /**
   * PostgreSQL only: calls `onNotify` with the payload of every NOTIFY on `channel` (from any
   * process), and with `undefined` after a lost connection came back (some may have been
   * missed). Resolves once listening, to a function that stops. PGlite has one process, whose
   * code can signal itself.
   */
  listen?(channel: string, onNotify: (payload: string | undefined) => void): Promise<() => Promise<void>>;
  /**
   * Takes the lock `name` unless another holder has it (then undefined): one holder at a time
   * across every process on this database. Held until released, or lost with the holder's
   * connection (PostgreSQL): then another process may take it within seconds.
   */
  tryLock(name: string): Promise<HeldLock | undefined>;
  close(): Promise<void>;
}

export function postgresDatabase(config: string | PoolConfig): Database {
  const options: PoolConfig = typeof config === 'string' ? { connectionString: config } : config;
  // Pipelined clients send a statement without waiting for the answers to those before it:
  // a transaction's BEGIN goes with its first statement, and `write`s with what follows them.
  const pool = new Pool({ ...options, pipeline: true });
  // An idle client that loses its server must not crash the process; the next query reconnects.
  pool.on('error', () => undefined);
  const query = async <Row>(sql: string, params?: unknown[]) => {
    const result = await pool.query(prepared(sql, params));
    return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
  };
  return {
    kind: 'postgres',
    query,
    write: async (sql, params) => void (await query(sql, params)),
    async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>, options?: TransactionOptions): Promise<T> {
      const client = await pool.connect();
      // A connection lost between two statements is reported as an event, not a rejection;
      // the next statement then fails and the transaction rolls back.
      const onConnectionError = () => undefined;
      client.on('error', onConnectionError);
      const transaction = pipelinedTransaction(client, options);
      let broken: Error | undefined;
      try {
        const result = await fn(transaction.sql);
        await transaction.commit();
        return result;
      } catch (error) {
        await transaction.rollback().catch((rollbackError: Error) => (broken = rollbackError));
        throw error;
      } finally {
        client.off('error', onConnectionError);
        // A client whose rollback failed is destroyed rather than returned to the pool.
        client.release(broken);
      }
    },
    async exec(sql: string) {
      await pool.query(sql);
    },
    listen: (channel, onNotify) => listenOn(options, channel, onNotify),
    tryLock: (name) => tryAdvisoryLock(options, name),
    async close() {
      await pool.end();
    },
  };
}

/** LISTEN on a connection of its own (outside the pool), reconnecting every second while it is lost. */
async function listenOn(
  options: PoolConfig,
  channel: string,
  onNotify: (payload: string | undefined) => void,
): Promise<() => Promise<void>> {
  let current: Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const later = () => {
    if (closed) return;
    retry = setTimeout(reconnect, 1000);
    retry.unref();
  };
  const connect = async () => {
    const client = new Client(options);
    client.on('error', () => undefined);
    client.on('notification', (n) => {
      if (n.channel === channel) onNotify(n.payload);
    });
    client.on('end', () => {
      if (current !== client) return;
      current = undefined;
      later();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${quoteIdentifier(channel)}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (closed) await client.end();
    else current = client;
  };
  const reconnect = () => connect().then(() => onNotify(undefined), later);
  await connect();
  return async () => {
    closed = true;
    clearTimeout(retry);
    const client = current;
    current = undefined;
    await client?.end().catch(() => undefined);
  };
}

/**
 * `dataDir` undefined keeps everything in memory; a path persists it (the embedded default).
 *
 * Statements go through `pg`'s client, as named prepared statements like on PostgreSQL: PGlite's
 * own `query` parses and plans every call, which made a plain lookup by key about three times as
 * costly (and PgliteConnection hands each statement's messages to PGlite in one call). PGlite
 * has one session, so the client is used by one caller at a time, a transaction from its BEGIN
 * to its COMMIT.
 */
export async function pgliteDatabase(dataDir?: string): Promise<Database> {
  const db = dataDir ? await pgliteIn(dataDir) : await inMemoryPglite();
  const client = new Client({ connection: new PgliteConnection(db), pipeline: true } as ClientConfig);
  await client.connect();
  const session = oneAtATime();
  const query = async <Row>(sql: string, params?: unknown[]) => {
    const r = await client.query(prepared(sql, params));
    return { rows: r.rows as Row[], rowCount: r.rowCount ?? 0 };
  };
  const locks = inProcessLocks();
  return {
    kind: 'pglite',
    query: (sql, params) => session(() => query(sql, params)),
    write: (sql, params) => session(async () => void (await query(sql, params))),
    transaction: (fn, options) =>
      session(async () => {
        const transaction = pipelinedTransaction(client, options);
        try {
          const result = await fn(transaction.sql);
          await transaction.commit();
          return result;
        } catch (error) {
          await transaction.rollback().catch(() => undefined);
          throw error;
        }
      }),
    async exec(sql: string) {
      await session(() => client.query(sql));
    },
    tryLock: async (name) => locks.tryLock(name),
    async close() {
      await session(() => client.end());
      await db.close();
    },
  };
}

/** Runs the functions given to it one after another, in the order they came. */
function oneAtATime() {
  let last: Promise<unknown> = Promise.resolve();
  return <T>(fn: () => Promise<T>): Promise<T> => {
    const turn = last.then(fn);
    last = turn.catch(() => undefined);
    return turn;
  };
}

/**
 * PGlite's data belongs to one process, so the holders of a lock can only be in this one. (Its
 * advisory locks would not do: every caller shares its one session, in which they are re-entrant.)
 */
function inProcessLocks() {
  const held = new Set<string>();
  return {
    tryLock(name: string): HeldLock | undefined {
      if (held.has(name)) return undefined;
      held.add(name);
      return {
        lost: new Promise<void>(() => undefined),
        release: async () => void held.delete(name),
      };
    },
  };
}

/** `DATABASE_URL` selects PostgreSQL; otherwise the embedded PGlite under `dataDir`. */
export async function databaseFromEnv(dataDir: string, env: NodeJS.ProcessEnv = process.env): Promise<Database> {
  return env.DATABASE_URL ? postgresDatabase(env.DATABASE_URL) : pgliteDatabase(dataDir);
}

export function quoteIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Unsafe SQL identifier: ${name}`);
  return `"${name}"`;
}
