import type { DomainEventEnvelope } from '@billing/contracts';
import { randomBytes } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { type Database, migrateSchema, quoteIdentifier } from '@billing/eventstore';
import {
  type DeliveryContext,
  type RawMessage,
  StoppedError,
  deliver,
  deliverBatch,
  parkAndLog,
  retryPolicy,
  stoppableSleep,
} from './delivery';
import { partitionOf } from './partition';
import { type Bus, type OutgoingMessage, type SubscribeOptions, type Subscription, dlqTopicOf } from './types';

export interface DatabaseBusOptions {
  /** Schema of the bus's tables (default `bus`). */
  schema?: string;
  /** Partitions of topics this bus creates (default 3). */
  partitions?: number;
  /** Put before every topic name in the tables, as KafkaBus does on the broker. */
  topicPrefix?: string;
  /** Messages a partition's worker reads at once (default 100). */
  batchSize?: number;
  /** A group's offset is committed at most this long after a message was handled (default 1 s). */
  commitIntervalMs?: number;
  /**
   * A worker with nothing to do looks again after this long even if nothing woke it (default
   * 5 s on PGlite, 1 s on PostgreSQL). Publishes in this process wake it at once, and on
   * PostgreSQL so does NOTIFY from any process.
   */
  pollIntervalMs?: number;
  /** Members beat this often, and then rebalance (default 3 s on PGlite, 1 s on PostgreSQL). */
  heartbeatIntervalMs?: number;
  /** A member silent for this long is gone, and its partitions' leases lapse (default 30 s on PGlite, 10 s on PostgreSQL). */
  sessionTimeoutMs?: number;
  /** Messages older than this that every active group has passed are deleted (default 7 days). */
  retentionMs?: number;
  logger?: { error: (details: object, message: string) => void };
}

const stderrLogger = {
  error: (details: object, message: string) => process.stderr.write(`${JSON.stringify({ message, ...details })}\n`),
};

/** Each process's member ids start with this: whose a member or lease is, when looking at the tables. */
const INCARNATION = randomBytes(6).toString('hex');

/**
 * Per database object: one migration per schema, and one emitter through which the buses of this
 * process wake each other (publishes, members joining, leaving and releasing partitions).
 */
const shared = new WeakMap<Database, { migrations: Map<string, Promise<void>>; signals: EventEmitter }>();
function sharedOf(database: Database) {
  let entry = shared.get(database);
  if (!entry) {
    const signals = new EventEmitter();
    signals.setMaxListeners(0);
    entry = { migrations: new Map(), signals };
    shared.set(database, entry);
  }
  return entry;
}

export function databaseBusDdl(schema: string): string[] {
  const s = quoteIdentifier(schema);
  return [
    `CREATE SCHEMA IF NOT EXISTS ${s}`,
    // A topic's partitions and the next offset of each; publishers lock the row, so a
    // partition's offsets commit in order and a reader never passes one that commits late.
    `CREATE TABLE IF NOT EXISTS ${s}.partitions (
      topic text NOT NULL,
      partition integer NOT NULL,
      next_offset bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (topic, partition)
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.messages (
      topic text NOT NULL,
      partition integer NOT NULL,
      "offset" bigint NOT NULL,
      key text NOT NULL,
      value text NOT NULL,
      headers jsonb NOT NULL,
      published_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (topic, partition, "offset")
    )`,
    // A group's position in each partition, and the member that holds the partition (a lease).
    `CREATE TABLE IF NOT EXISTS ${s}.group_offsets (
      group_id text NOT NULL,
      topic text NOT NULL,
      partition integer NOT NULL,
      next_offset bigint NOT NULL DEFAULT 0,
      owner text,
      lease_until timestamptz,
      committed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (group_id, topic, partition)
    )`,
    `CREATE TABLE IF NOT EXISTS ${s}.members (
      group_id text NOT NULL,
      member_id text NOT NULL,
      topics text[] NOT NULL,
      heartbeat_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (group_id, member_id)
    )`,
  ];
}

interface Worker {
  topic: string;
  partition: number;
  /** The next offset to hand over; committed after each batch. */
  next: number;
  /** Set when the partition goes to another member, or the lease was lost. */
  revoked: boolean;
  /** Interrupts a backoff on revoke or stop: the message is left uncommitted. */
  controller: AbortController;
  /** Something may have been published since the last read. */
  pending: boolean;
  /**
   * Messages this process published to the partition, by offset, handed over by the publisher
   * after its commit: read from here instead of the table while they follow on from `next`.
   */
  recent: Map<number, MessageRow>;
  wake: (published?: MessageRow[]) => void;
  done: Promise<void>;
}

/** A worker that falls this far behind reads from the table again (its `recent` is dropped). */
const RECENT_LIMIT = 1000;

interface Member {
  id: string;
  groupId: string;
  topics: string[];
  context: DeliveryContext;
  controller: AbortController;
  workers: Map<string, Worker>;
  /** Partitions the last rebalance gave this member, as `topic/partition` slots. */
  assigned: Set<string>;
  stopped: boolean;
  ticking: Promise<void> | undefined;
  tickAgain: boolean;
  timer: NodeJS.Timeout | undefined;
  onGroupSignal: () => void;
}

const slotOf = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/**
 * The Bus on the services' own database (PGlite for the embedded default, or PostgreSQL): a
 * publish appends to `messages` in one transaction, offsets per topic partition by key, so one
 * key keeps its order; each consumer group keeps its offset per partition in `group_offsets`,
 * moved only after the handler finished (its effect, with its inbox row, committed first) or the
 * message was parked on `<topic>.dlq`. Nothing acknowledged is lost when the process dies.
 *
 * Members of a group share the partitions of their topics: each beats in `members`, takes the
 * partitions that fall to it (p mod the live members) under a lease, and hands a partition over
 * after the message in hand. A dead member's leases lapse after `sessionTimeoutMs`; on PGlite,
 * which one process owns, a new process clears its predecessor's at once.
 */
export class DatabaseBus implements Bus {
  private readonly schema: string;
  private readonly t: { partitions: string; messages: string; offsets: string; members: string };
  private readonly signals: EventEmitter;
  private readonly members = new Set<Member>();
  private readonly partitionCounts = new Map<string, number>();
  private readonly channel: string;
  private unlisten: Promise<(() => Promise<void>) | undefined> | undefined;
  private pruneTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly database: Database,
    private readonly options: DatabaseBusOptions = {},
  ) {
    this.schema = options.schema ?? 'bus';
    const s = quoteIdentifier(this.schema);
    this.t = {
      partitions: `${s}.partitions`,
      messages: `${s}.messages`,
      offsets: `${s}.group_offsets`,
      members: `${s}.members`,
    };
    this.channel = `${this.schema}_published`;
    this.signals = sharedOf(database).signals;
  }

  private get batchSize() {
    return this.options.batchSize ?? 100;
  }
  /**
   * On PGlite every publisher is in this process and wakes the workers itself, and every member
   * too: the poll and the beat are only a safety net, and cost little when idle. On PostgreSQL
   * NOTIFY wakes other processes' workers, and members in other processes rebalance by the beat.
   */
  private get pollIntervalMs() {
    return this.options.pollIntervalMs ?? (this.database.kind === 'pglite' ? 5000 : 1000);
  }
  private get heartbeatIntervalMs() {
    return this.options.heartbeatIntervalMs ?? (this.database.kind === 'pglite' ? 3000 : 1000);
  }
  private get sessionTimeoutMs() {
    return this.options.sessionTimeoutMs ?? (this.database.kind === 'pglite' ? 30_000 : 10_000);
  }
  private get logger() {
    return this.options.logger ?? stderrLogger;
  }

  private onBus(topic: string): string {
    return `${this.options.topicPrefix ?? ''}${topic}`;
  }

  private fromBus(topic: string): string {
    const prefix = this.options.topicPrefix ?? '';
    return topic.startsWith(prefix) ? topic.slice(prefix.length) : topic;
  }

  private publishedSignal(topic: string, partition: number) {
    return `p:${this.schema}:${slotOf(topic, partition)}`;
  }

  private groupSignal(groupId: string) {
    return `g:${this.schema}:${groupId}`;
  }

  /** Creates the tables once per database and schema; on PGlite, drops a dead process's members and leases. */
  migrate(): Promise<void> {
    const { migrations } = sharedOf(this.database);
    let migration = migrations.get(this.schema);
    if (!migration) {
      migration = (async () => {
        await migrateSchema(this.database, this.schema, databaseBusDdl(this.schema).join(';\n'));
        if (this.database.kind === 'pglite') await this.forgetPreviousProcess();
      })();
      migrations.set(this.schema, migration);
      migration.catch(() => migrations.delete(this.schema));
    }
    return migration;
  }

  /** PGlite's data belongs to one process at a time: members and leases left are a dead one's. */
  private async forgetPreviousProcess(): Promise<void> {
    await this.database.transaction(async (tx) => {
      await tx.query(`DELETE FROM ${this.t.members}`);
      await tx.query(`UPDATE ${this.t.offsets} SET owner = NULL, lease_until = NULL WHERE owner IS NOT NULL`);
    });
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.append(
      this.onBus(topic),
      messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value), headers: m.headers ?? {} })),
    );
  }

  async publishRaw(topic: string, key: string, value: string): Promise<void> {
    await this.append(this.onBus(topic), [{ key, value, headers: {} }]);
  }

  /** Every message of a topic as stored, by partition and offset: for tests and tools. */
  async messages(topic: string): Promise<RawMessage[]> {
    await this.migrate();
    const { rows } = await this.database.query<MessageRow & { partition: number }>(
      `SELECT m.partition, m."offset"::text AS "offset", m.key, m.value, m.headers FROM ${this.t.messages} m
       WHERE m.topic = $1 ORDER BY m.partition, m."offset"`,
      [this.onBus(topic)],
    );
    return rows.map((row) => toRaw(topic, row.partition, row));
  }

  async subscribe<Value = DomainEventEnvelope>(requested: SubscribeOptions<Value>): Promise<Subscription> {
    // Values reach the handler as `readValue` reads them (domain events without it).
    const options = requested as unknown as SubscribeOptions;
    if (this.closed) throw new Error('bus is closed');
    await this.migrate();
    const topics = [...new Set(options.topics.map((t) => this.onBus(t)))];
    for (const topic of topics) await this.partitionCount(topic);
    await this.startListening();
    this.startPruning();
    const controller = new AbortController();
    const member: Member = {
      id: `${INCARNATION}-${randomBytes(6).toString('hex')}`,
      groupId: options.groupId,
      topics,
      controller,
      context: {
        groupId: options.groupId,
        handler: options.handler,
        readValue: options.readValue,
        batch: options.handler.batch,
        retry: retryPolicy(options.retry),
        sleep: stoppableSleep(controller.signal),
        park: parkAndLog(
          (raw, headers) =>
            this.append(this.onBus(dlqTopicOf(raw.topic)), [{ key: raw.key, value: raw.value, headers }]),
          this.logger,
          options.groupId,
        ),
      },
      workers: new Map(),
      assigned: new Set(),
      stopped: false,
      ticking: undefined,
      tickAgain: false,
      timer: undefined,
      onGroupSignal: () => this.tickSoon(member),
    };
    this.members.add(member);
    this.signals.on(this.groupSignal(member.groupId), member.onGroupSignal);
    await this.tick(member, true);
    member.timer = setInterval(() => this.tickSoon(member), this.heartbeatIntervalMs);
    member.timer.unref();
    await this.balanced(member);
    return { stop: () => this.stopMember(member) };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.pruneTimer);
    await Promise.all([...this.members].map((m) => this.stopMember(m)));
    const unlisten = await this.unlisten?.catch(() => undefined);
    this.unlisten = undefined;
    await unlisten?.();
  }

  /** Deletes messages past the retention that every group active within it has consumed; returns how many. */
  async prune(retentionMs = this.options.retentionMs ?? 7 * 24 * 3600_000): Promise<number> {
    await this.migrate();
    const result = await this.database.query(
      `DELETE FROM ${this.t.messages} m
       WHERE m.published_at < now() - $1::double precision * interval '1 millisecond'
         AND NOT EXISTS (
           SELECT 1 FROM ${this.t.offsets} o
           WHERE o.topic = m.topic AND o.partition = m.partition AND o.next_offset <= m."offset"
             AND o.committed_at >= now() - $1::double precision * interval '1 millisecond')`,
      [retentionMs],
    );
    return result.rowCount;
  }

  private startPruning() {
    if (this.pruneTimer || this.closed) return;
    this.pruneTimer = setInterval(
      () =>
        void this.prune().catch((err) => this.logger.error({ component: 'bus', err: String(err) }, 'bus prune failed')),
      3600_000,
    );
    this.pruneTimer.unref();
  }

  /** On PostgreSQL, publishes of other processes wake this one's workers through NOTIFY. */
  private startListening(): Promise<unknown> {
    if (!this.unlisten) {
      const listen = this.database.listen;
      this.unlisten = listen
        ? listen
            .call(this.database, this.channel, (payload) => this.onNotify(payload))
            .catch((err: unknown) => {
              // Without NOTIFY, workers still find new messages on their poll.
              this.logger.error({ component: 'bus', err: String(err) }, 'LISTEN failed; polling only');
              return undefined;
            })
        : Promise.resolve(undefined);
    }
    return this.unlisten;
  }

  private onNotify(payload: string | undefined) {
    if (payload === undefined) {
      for (const member of this.members) for (const worker of member.workers.values()) worker.wake();
      return;
    }
    try {
      const { t, p } = JSON.parse(payload) as { t: string; p: number[] };
      for (const partition of p) this.signals.emit(this.publishedSignal(t, partition));
    } catch {
      // Not ours.
    }
  }

  /** The topic's partitions, created on first use (a topic keeps the count it was made with). */
  private async partitionCount(topic: string): Promise<number> {
    const known = this.partitionCounts.get(topic);
    if (known) return known;
    await this.migrate();
    await this.database.query(
      `INSERT INTO ${this.t.partitions} (topic, partition)
       SELECT $1, p FROM generate_series(0, $2::int - 1) AS p
       WHERE NOT EXISTS (SELECT 1 FROM ${this.t.partitions} WHERE topic = $1)
       ON CONFLICT DO NOTHING`,
      [topic, this.options.partitions ?? 3],
    );
    const { rows } = await this.database.query<{ count: number }>(
      `SELECT count(*)::int AS count FROM ${this.t.partitions} WHERE topic = $1`,
      [topic],
    );
    const count = rows[0]!.count;
    this.partitionCounts.set(topic, count);
    return count;
  }

  private async append(
    topic: string,
    messages: Array<{ key: string; value: string; headers: Record<string, string> }>,
  ): Promise<void> {
    if (this.closed) throw new Error('bus is closed');
    const count = await this.partitionCount(topic);
    const byPartition = new Map<number, typeof messages>();
    for (const message of messages) {
      const partition = partitionOf(message.key, count);
      const list = byPartition.get(partition);
      if (list) list.push(message);
      else byPartition.set(partition, [message]);
    }
    const partitions = [...byPartition.keys()].sort((a, b) => a - b);
    const rows = partitions.flatMap((partition) => byPartition.get(partition)!.map((m) => ({ ...m, partition })));
    // One statement, so atomic without BEGIN and COMMIT: takes the partitions' rows in ascending
    // order (concurrent publishers never deadlock), moves their next offsets, and inserts the
    // messages at the offsets they held. The row lock lasts until commit, so a partition's
    // offsets become visible in order.
    const { rows: firsts } = await this.database.query<{ partition: number; first: string }>(
      `WITH input AS (
         SELECT * FROM unnest($2::int[], $3::text[], $4::text[], $5::text[]) WITH ORDINALITY
           AS m(partition, key, value, headers, ord)
       ), counts AS (
         SELECT partition, count(*) AS n FROM input GROUP BY partition
       ), locked AS (
         SELECT p.partition FROM ${this.t.partitions} p
         WHERE p.topic = $1 AND p.partition IN (SELECT partition FROM counts)
         ORDER BY p.partition FOR UPDATE OF p
       ), bumped AS (
         UPDATE ${this.t.partitions} p SET next_offset = p.next_offset + c.n
         FROM counts c
         WHERE p.topic = $1 AND p.partition = c.partition AND c.partition IN (SELECT partition FROM locked)
         RETURNING p.partition, p.next_offset - c.n AS first
       ), inserted AS (
         INSERT INTO ${this.t.messages} (topic, partition, "offset", key, value, headers)
         SELECT $1, i.partition, b.first + row_number() OVER (PARTITION BY i.partition ORDER BY i.ord) - 1,
           i.key, i.value, i.headers::jsonb
         FROM input i JOIN bumped b ON b.partition = i.partition
         RETURNING partition, "offset"
       )
       SELECT partition, min("offset")::text AS first FROM inserted GROUP BY partition`,
      [
        topic,
        rows.map((m) => m.partition),
        rows.map((m) => m.key),
        rows.map((m) => m.value),
        rows.map((m) => JSON.stringify(m.headers)),
      ],
    );
    // After the commit: other processes' workers then find the messages when they wake. Should
    // this process die in between, they find them on their next poll.
    if (this.database.kind === 'postgres') {
      await this.database
        .query(`SELECT pg_notify($1, $2)`, [this.channel, JSON.stringify({ t: topic, p: partitions })])
        .catch((err) => this.logger.error({ component: 'bus', err: String(err) }, 'NOTIFY failed; consumers poll'));
    }
    // Committed: this process's workers take the messages from here rather than the table.
    for (const { partition, first } of firsts) {
      const published = byPartition
        .get(partition)!
        .map((m, i) => ({ offset: String(Number(first) + i), key: m.key, value: m.value, headers: m.headers }));
      this.signals.emit(this.publishedSignal(topic, partition), published);
    }
  }

  private tickSoon(member: Member): void {
    if (member.stopped) return;
    if (member.ticking) {
      member.tickAgain = true;
      return;
    }
    void this.tick(member, false).catch((err) =>
      this.logger.error({ component: 'bus', group: member.groupId, err: String(err) }, 'bus member tick failed'),
    );
  }

  /**
   * Beats, reads the group's live members, renews this member's leases, hands over partitions
   * that now fall to another member and claims those that fall to it.
   */
  private async tick(member: Member, joining: boolean): Promise<void> {
    if (member.ticking) {
      member.tickAgain = true;
      return member.ticking;
    }
    member.ticking = (async () => {
      try {
        do {
          member.tickAgain = false;
          if (member.stopped) return;
          await this.rebalance(member, joining);
          joining = false;
        } while (member.tickAgain && !member.stopped);
      } finally {
        member.ticking = undefined;
      }
    })();
    return member.ticking;
  }

  private async rebalance(member: Member, joining: boolean): Promise<void> {
    const ttl = this.sessionTimeoutMs;
    // One statement: beat, renew this member's leases, and read the group's live members. The
    // SELECT sees the table as before the beat, so a member's own row comes from `beat`.
    const { rows } = await this.database.query<{
      kind: 'member' | 'owned';
      id: string;
      topics: string[] | null;
      partition: number | null;
    }>(
      `WITH beat AS (
         INSERT INTO ${this.t.members} (group_id, member_id, topics, heartbeat_at) VALUES ($1, $2, $3::text[], now())
         ON CONFLICT (group_id, member_id) DO UPDATE SET heartbeat_at = now()
         RETURNING member_id, topics
       ), renewed AS (
         UPDATE ${this.t.offsets} SET lease_until = now() + $4::double precision * interval '1 millisecond'
         WHERE group_id = $1 AND owner = $2 RETURNING topic, partition
       )
       SELECT 'member' AS kind, member_id AS id, topics, NULL::integer AS partition FROM beat
       UNION ALL
       SELECT 'member', member_id, topics, NULL FROM ${this.t.members}
       WHERE group_id = $1 AND member_id <> $2 AND heartbeat_at > now() - $4::double precision * interval '1 millisecond'
       UNION ALL
       SELECT 'owned', topic, NULL, partition FROM renewed`,
      [member.groupId, member.id, member.topics, ttl],
    );
    if (joining) this.signals.emit(this.groupSignal(member.groupId));
    if (member.stopped) return;
    const live = rows
      .filter((r) => r.kind === 'member')
      .map((r) => ({ member_id: r.id, topics: r.topics ?? [] }))
      .sort((a, b) => (a.member_id < b.member_id ? -1 : a.member_id > b.member_id ? 1 : 0));
    const ownedSlots = new Set(rows.filter((r) => r.kind === 'owned').map((r) => slotOf(r.id, r.partition!)));

    const assigned = new Set<string>();
    for (const topic of member.topics) {
      const members = live.filter((m) => m.topics.includes(topic)).map((m) => m.member_id);
      const index = members.indexOf(member.id);
      if (index < 0) continue;
      const count = await this.partitionCount(topic);
      for (let partition = 0; partition < count; partition++) {
        if (partition % members.length === index) assigned.add(slotOf(topic, partition));
      }
    }
    member.assigned = assigned;

    for (const [slot, worker] of member.workers) {
      // Lost the lease (this member was silent too long and another took over), or handed over.
      if (!ownedSlots.has(slot) || !assigned.has(slot)) this.revoke(worker);
    }
    for (const slot of assigned) {
      if (member.workers.has(slot) || member.stopped) continue;
      const [topic, partition] = slot.split('\u0000') as [string, string];
      const claimed = await this.database.query<{ next_offset: string }>(
        `INSERT INTO ${this.t.offsets} AS o (group_id, topic, partition, owner, lease_until)
         VALUES ($1, $2, $3, $4, now() + $5::double precision * interval '1 millisecond')
         ON CONFLICT (group_id, topic, partition) DO UPDATE
           SET owner = EXCLUDED.owner, lease_until = EXCLUDED.lease_until
           WHERE o.owner IS NULL OR o.owner = EXCLUDED.owner OR o.lease_until < now()
         RETURNING next_offset::text AS next_offset`,
        [member.groupId, topic, Number(partition), member.id, ttl],
      );
      const row = claimed.rows[0];
      if (!row) continue; // still held by its previous member, which hands it over after its message
      if (member.stopped) {
        await this.release(member, topic, Number(partition), Number(row.next_offset));
        continue;
      }
      this.startWorker(member, topic, Number(partition), Number(row.next_offset));
    }
  }

  /** Waits (a bounded time) until this member holds every partition that falls to it. */
  private async balanced(member: Member): Promise<void> {
    const deadline = Date.now() + this.sessionTimeoutMs + this.heartbeatIntervalMs;
    while (!member.stopped && Date.now() < deadline) {
      if ([...member.assigned].every((slot) => member.workers.has(slot))) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.signals.off(this.groupSignal(member.groupId), done);
          resolve();
        };
        const timer = setTimeout(done, 250);
        this.signals.on(this.groupSignal(member.groupId), done);
      });
      await this.tick(member, false);
    }
  }

  private revoke(worker: Worker) {
    if (worker.revoked) return;
    worker.revoked = true;
    worker.controller.abort();
    worker.wake();
  }

  private startWorker(member: Member, topic: string, partition: number, next: number) {
    const slot = slotOf(topic, partition);
    const controller = new AbortController();
    const onMemberStop = () => controller.abort();
    member.controller.signal.addEventListener('abort', onMemberStop, { once: true });
    let waiting: (() => void) | undefined;
    const worker: Worker = {
      topic,
      partition,
      next,
      revoked: false,
      controller,
      pending: true,
      recent: new Map(),
      wake: (published) => {
        if (published) {
          for (const message of published) worker.recent.set(Number(message.offset), message);
          if (worker.recent.size > RECENT_LIMIT) worker.recent.clear();
        }
        worker.pending = true;
        waiting?.();
      },
      done: Promise.resolve(),
    };
    const signal = this.publishedSignal(topic, partition);
    this.signals.on(signal, worker.wake);
    const idle = (ms: number) =>
      new Promise<void>((resolve) => {
        if (worker.pending || worker.revoked || member.stopped) return resolve();
        const timer = setTimeout(done, ms);
        timer.unref();
        function done() {
          clearTimeout(timer);
          waiting = undefined;
          resolve();
        }
        waiting = done;
      });
    member.workers.set(slot, worker);
    worker.done = this.work(member, worker, idle).finally(() => {
      this.signals.off(signal, worker.wake);
      member.controller.signal.removeEventListener('abort', onMemberStop);
      member.workers.delete(slot);
      if (!member.stopped) this.tickSoon(member);
    });
  }

  /**
   * Hands a partition's messages over one at a time, in offset order, and commits the group's
   * offset only past messages whose handler finished or that were parked: at most
   * `commitIntervalMs` after the first of them, on a stop or a hand-over at once. A crash
   * repeats what was handled since the last commit; the consumers' inboxes make that harmless.
   */
  private async work(member: Member, worker: Worker, idle: (ms: number) => Promise<void>): Promise<void> {
    const context: DeliveryContext = { ...member.context, sleep: stoppableSleep(worker.controller.signal) };
    let committed = worker.next;
    /** When the offset first moved past `committed`. */
    let dirtySince = 0;
    const active = () => !worker.revoked && !member.stopped;
    const commitInterval = this.options.commitIntervalMs ?? 1000;
    /** Read at once: at the start, and after a full batch (more may be there). */
    let read = true;
    try {
      while (active()) {
        try {
          if (worker.next !== committed && Date.now() - dirtySince >= commitInterval) {
            if (!(await this.commit(member, worker))) return; // another member holds it now
            committed = worker.next;
          }
          if (!read && !worker.pending) {
            // Everything there was is read, and every publish since wakes this worker: wait for
            // one, or until the pending commit is due, or the poll.
            const dirty = worker.next !== committed;
            await idle(dirty ? Math.max(dirtySince + commitInterval - Date.now(), 0) : this.pollIntervalMs);
            if (dirty && !worker.pending) continue; // the commit is due
          }
          read = false;
          worker.pending = false;
          const rows = this.takeRecent(worker) ?? (await this.fetch(worker));
          const done = (raw: RawMessage) => {
            if (worker.next === committed) dirtySince = Date.now();
            worker.next = Number(raw.offset) + 1;
          };
          const raws = rows.map((row) => toRaw(this.fromBus(worker.topic), worker.partition, row));
          try {
            // A batch handler takes the rows at once (one by one if that fails).
            if (context.batch) await deliverBatch(raws, context, done, active);
            else {
              for (const raw of raws) {
                if (!active()) break;
                await deliver(raw, context);
                done(raw);
              }
            }
          } catch (error) {
            // Otherwise the DLQ could not be written: the message stays, tried again below.
            if (!(error instanceof StoppedError)) throw error;
          }
          read = rows.length === this.batchSize || worker.recent.has(worker.next);
        } catch (error) {
          // worker.next is past handled messages only: the one that failed is handed over again.
          this.logger.error(
            { component: 'bus', group: member.groupId, topic: worker.topic, err: String(error) },
            'bus worker failed; retrying',
          );
          worker.pending = false;
          read = true;
          await idle(1000);
        }
      }
    } finally {
      // Commits what was handled and gives the partition up (only while this member holds it).
      await this.release(member, worker.topic, worker.partition, worker.next).catch(() => undefined);
    }
  }

  /**
   * The messages from `next` on that this process published (committed) and handed over, up to
   * a batch; undefined when `next` is not among them (then the table has them).
   */
  private takeRecent(worker: Worker): MessageRow[] | undefined {
    for (const offset of worker.recent.keys()) if (offset < worker.next) worker.recent.delete(offset);
    if (!worker.recent.has(worker.next)) return undefined;
    const rows: MessageRow[] = [];
    for (let offset = worker.next; rows.length < this.batchSize; offset++) {
      const row = worker.recent.get(offset);
      if (!row) break;
      rows.push(row);
      worker.recent.delete(offset);
    }
    return rows;
  }

  private async fetch(worker: Worker): Promise<MessageRow[]> {
    const { rows } = await this.database.query<MessageRow>(
      // Ordered by the bigint column: the text alias would put 10 before 9.
      `SELECT m."offset"::text AS "offset", m.key, m.value, m.headers FROM ${this.t.messages} m
       WHERE m.topic = $1 AND m.partition = $2 AND m."offset" >= $3 ORDER BY m."offset" LIMIT $4`,
      [worker.topic, worker.partition, worker.next, this.batchSize],
    );
    return rows;
  }

  private async commit(member: Member, worker: Worker): Promise<boolean> {
    const result = await this.database.query(
      `UPDATE ${this.t.offsets} SET next_offset = $4, committed_at = now(),
         lease_until = now() + $6::double precision * interval '1 millisecond'
       WHERE group_id = $1 AND topic = $2 AND partition = $3 AND owner = $5`,
      [member.groupId, worker.topic, worker.partition, worker.next, member.id, this.sessionTimeoutMs],
    );
    return result.rowCount > 0;
  }

  /** Gives the partition up at `next` (already committed), for the member it falls to now. */
  private async release(member: Member, topic: string, partition: number, next: number): Promise<void> {
    await this.database.query(
      `UPDATE ${this.t.offsets} SET owner = NULL, lease_until = NULL, next_offset = greatest(next_offset, $4)
       WHERE group_id = $1 AND topic = $2 AND partition = $3 AND owner = $5`,
      [member.groupId, topic, partition, next, member.id],
    );
    this.signals.emit(this.groupSignal(member.groupId));
  }

  private async stopMember(member: Member): Promise<void> {
    if (!this.members.has(member)) return;
    this.members.delete(member);
    member.stopped = true;
    clearInterval(member.timer);
    this.signals.off(this.groupSignal(member.groupId), member.onGroupSignal);
    member.controller.abort();
    for (const worker of member.workers.values()) worker.wake();
    await member.ticking?.catch(() => undefined);
    await Promise.all([...member.workers.values()].map((w) => w.done));
    await this.database
      .query(`DELETE FROM ${this.t.members} WHERE group_id = $1 AND member_id = $2`, [member.groupId, member.id])
      .catch(() => undefined);
    this.signals.emit(this.groupSignal(member.groupId));
  }
}

interface MessageRow {
  offset: string;
  key: string;
  value: string;
  headers: Record<string, string> | string;
}

function toRaw(topic: string, partition: number, row: MessageRow): RawMessage {
  const headers = typeof row.headers === 'string' ? (JSON.parse(row.headers) as Record<string, string>) : row.headers;
  return { topic, partition, offset: row.offset, key: row.key, value: row.value, headers };
}
