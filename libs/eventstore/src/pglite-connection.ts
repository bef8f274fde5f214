import { EventEmitter } from 'node:events';
import type { PGlite } from '@electric-sql/pglite';
import { serialize } from 'pg-protocol';

type Serializer = typeof serialize;

/**
 * The connection `pg`'s client talks to, on PGlite instead of a socket. `pg` sends a statement
 * as several protocol messages (bind, describe, execute, sync; parse the first time); PGlite's
 * own node-postgres connection hands each to PGlite on its own, while this one gathers them and
 * hands them over in one call at the sync, which PGlite answers as a server would: half the cost
 * of a lookup by key. Answers are emitted as the events `pg`'s client listens for.
 */
export class PgliteConnection extends EventEmitter {
  /** Read and written by `pg`'s client: which named statements this session has prepared. */
  readonly parsedStatements: Record<string, string> = {};
  readonly submittedNamedStatements: Record<string, string> = {};
  readonly stream = { destroy: () => this.end() };
  _connecting = false;
  private gathered: Buffer[] = [];
  private waiting: Buffer[] = [];
  /** PGlite answers one call at a time, in the order they were made. */
  private calls: Promise<void> = Promise.resolve();

  constructor(private readonly pglite: PGlite) {
    super();
  }

  async connect(): Promise<void> {
    this._connecting = true;
    await this.pglite.waitReady;
    process.nextTick(() => this.emit('readyForQuery'));
  }

  query(text: string): void {
    this.send(serialize.query(text));
  }

  parse(query: Parameters<Serializer['parse']>[0]): void {
    this.gathered.push(serialize.parse(query));
  }

  bind(config: Parameters<Serializer['bind']>[0]): void {
    this.gathered.push(serialize.bind(config));
  }

  describe(message: Parameters<Serializer['describe']>[0]): void {
    this.gathered.push(serialize.describe(message));
  }

  execute(config: Parameters<Serializer['execute']>[0]): void {
    this.gathered.push(serialize.execute(config));
  }

  close(message: Parameters<Serializer['close']>[0]): void {
    this.gathered.push(serialize.close(message));
  }

  flush(): void {
    this.sendGathered();
  }

  sync(): void {
    this.gathered.push(serialize.sync());
    this.sendGathered();
  }

  end(): void {
    this.calls = this.calls.then(() => void this.emit('end'));
  }

  // A socket's controls, which PGlite has no use for.
  requestSsl(): void {}
  startup(): void {}
  cancel(): void {}
  password(): void {}
  ref(): void {}
  unref(): void {}

  private sendGathered(): void {
    if (this.gathered.length === 0) return;
    const messages = Buffer.concat(this.gathered);
    this.gathered = [];
    this.send(messages);
  }

  /**
   * Messages sent while PGlite is busy wait and go over together in its next call: a pipelined
   * transaction's writes, and its COMMIT, cross into PGlite once.
   */
  private send(messages: Buffer): void {
    this.waiting.push(messages);
    if (this.waiting.length > 1) return;
    this.calls = this.calls
      .then(() => {
        const waiting = this.waiting;
        this.waiting = [];
        const all = waiting.length === 1 ? waiting[0]! : Buffer.concat(waiting);
        return this.pglite.execProtocolStream(new Uint8Array(all), { throwOnError: false });
      })
      .then((answers) => {
        const watched = this.listenerCount('message') > 0;
        for (const answer of answers) {
          if (watched) this.emit('message', answer);
          this.emit(answer.name === 'error' ? 'errorMessage' : answer.name, answer);
        }
      })
      .catch((error: unknown) => void this.emit('error', error));
  }
}
