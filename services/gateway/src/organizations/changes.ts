import { createHash } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { Database, SqlExecutor } from '@billing/eventstore';

/** PGlite runs in one process: its gateways signal each other here, by database and schema. */
const inProcess = new WeakMap<Database, EventEmitter>();
const emitterOf = (database: Database): EventEmitter => {
  let emitter = inProcess.get(database);
  if (!emitter) {
    emitter = new EventEmitter().setMaxListeners(0);
    inProcess.set(database, emitter);
  }
  return emitter;
};

/**
 * Tells every gateway on the same database and schema that an organization's keys or settings
 * changed, so that each drops what it cached of them.
 *
 * PGlite: one process, so a signal in it reaches every gateway before the change is answered.
 * PostgreSQL: a NOTIFY in the transaction that makes the change, delivered at its commit to every
 * gateway process listening, each of which drops its caches when it reads it: usually within
 * milliseconds, but a loaded process may read it after the change was answered. So a change that
 * must hold at once (a rolled key) is answered only `settleMs` after its commit (the key cache's
 * lifetime, counted from each lookup's start): by then no gateway holds a key it looked up before. A lost LISTEN
 * connection clears the caches when it comes back, as notifications may have been missed.
 */
export class OrganizationChanges {
  private constructor(
    private readonly database: Database,
    private readonly channel: string,
    private readonly settleMs: number,
    private readonly onChange: () => void,
    private stopListening: () => Promise<void>,
  ) {}

  static async start(
    database: Database,
    schema: string,
    settleMs: number,
    onChange: () => void,
  ): Promise<OrganizationChanges> {
    const channel = `organizations_${createHash('sha1').update(schema).digest('hex').slice(0, 24)}`;
    const changes = new OrganizationChanges(database, channel, settleMs, onChange, async () => undefined);
    if (database.listen) {
      changes.stopListening = await database.listen(channel, () => onChange());
    } else {
      const emitter = emitterOf(database);
      const listener = () => onChange();
      emitter.on(channel, listener);
      changes.stopListening = async () => void emitter.off(channel, listener);
    }
    return changes;
  }

  /** In the transaction of a change: PostgreSQL tells the listeners when it commits. */
  async notifyIn(tx: SqlExecutor): Promise<void> {
    if (this.database.listen) await tx.query('SELECT pg_notify($1, $2)', [this.channel, '']);
  }

  /** After the commit; with `atOnce`, resolves once no gateway can still use a key it cached before. */
  async afterCommit(atOnce: boolean): Promise<void> {
    this.onChange();
    if (!this.database.listen) emitterOf(this.database).emit(this.channel);
    else if (atOnce) await new Promise((resolve) => setTimeout(resolve, this.settleMs));
  }

  async stop(): Promise<void> {
    await this.stopListening();
  }
}
