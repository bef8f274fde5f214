import { createHash } from 'node:crypto';
import type { SqlExecutor, TransactionOptions } from './sql-executor';

/** Statement names by text, so that a statement's text is hashed once per process, not per call. */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `s_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    // Texts are the code's own; the bound only guards against code that builds them per call.
    if (statementNames.size < 10_000) statementNames.set(text, name);
  }
  return name;
}

/**
 * Parameterised statements are sent as named prepared statements, so each connection parses
 * and plans a statement once instead of on every call.
 */
export function prepared(text: string, values: unknown[] | undefined) {
  if (!values) return { text };
  return { name: statementName(text), text, values };
}

/** The part of a pipelined `pg` client a transaction uses. */
export interface PipelinedClient {
  query(config: string | { name?: string; text: string; values?: unknown[] }): Promise<{
    rows: unknown[];
    rowCount: number | null;
  }>;
}

/** The socket under a `pg` client, when it has one (PGlite's connection has none). */
function socketOf(client: PipelinedClient): { cork(): void; uncork(): void } | undefined {
  const stream = (client as { connection?: { stream?: { cork?: () => void; uncork?: () => void } } }).connection
    ?.stream;
  return stream?.cork && stream.uncork ? (stream as { cork(): void; uncork(): void }) : undefined;
}

/**
 * One transaction on a pipelined client, in as few round trips as its statements allow. BEGIN
 * (with `firstStatement`) is sent with the first statement, in one write to the socket; a
 * `write` is sent behind whatever precedes it and its answer read with the next `query`'s or the
 * COMMIT's. A transaction that sends nothing sends no BEGIN and no COMMIT either.
 */
export function pipelinedTransaction(client: PipelinedClient, options: TransactionOptions | undefined) {
  const begin = options?.firstStatement ? `BEGIN; ${options.firstStatement}` : 'BEGIN';
  const socket = socketOf(client);
  let begun = false;
  let corked = false;
  /** Sent, answers not yet read: BEGIN and `write`s. The first failure among them is the transaction's. */
  let unread: Promise<unknown>[] = [];
  let failure: unknown;

  const hold = () => {
    if (!corked && socket) socket.cork();
    corked = Boolean(socket);
  };
  const release = () => {
    if (corked) socket?.uncork();
    corked = false;
  };
  const unreadAnswer = (answer: Promise<unknown>) =>
    unread.push(answer.catch((error: unknown) => void (failure ??= error)));
  const send = (config: string | ReturnType<typeof prepared>) => {
    if (!begun) {
      begun = true;
      hold();
      unreadAnswer(client.query(begin));
    }
    return client.query(config);
  };
  /** Reads the answers sent before; throws the first failure among them. */
  const readUnread = async () => {
    const answers = unread;
    unread = [];
    await Promise.all(answers);
    if (failure !== undefined) throw failure;
  };

  const sql: SqlExecutor = {
    async query<Row>(text: string, params?: unknown[]) {
      const answer = send(prepared(text, params));
      release();
      // An earlier write's failure explains this statement's ("current transaction is aborted").
      const result = await answer.catch(async (error: unknown) => {
        await readUnread();
        throw error;
      });
      await readUnread();
      return { rows: result.rows as Row[], rowCount: result.rowCount ?? 0 };
    },
    async write(text: string, params?: unknown[]) {
      // Held before it is sent: it goes out with the next statement, not on its own.
      hold();
      unreadAnswer(send(prepared(text, params)));
    },
  };
  return {
    sql,
    async commit() {
      if (!begun) return;
      const committed = client.query('COMMIT');
      release();
      const [earlier, commit] = await Promise.allSettled([readUnread(), committed]);
      // A failed write turned the COMMIT into a rollback: its error is the transaction's.
      if (earlier.status === 'rejected') throw earlier.reason;
      if (commit.status === 'rejected') throw commit.reason;
    },
    async rollback() {
      if (!begun) return;
      const rolledBack = client.query('ROLLBACK');
      release();
      await Promise.all(unread);
      await rolledBack;
    },
  };
}
