import { newEventId } from './event-id';
import { EventEmitter } from 'node:events';
import { Actor, type Environment, SYSTEM_ACTOR } from '@billing/contracts';
import { currentActor } from './acting';
import type { Database, SqlExecutor } from './database';
import { migrateSchema } from './migration';
import { eventStoreDdl, tablesOf } from './schema';
import {
  START_OF_LOG,
  type AppendOptions,
  type AppendResult,
  ExpectedVersionConflictError,
  type LogPosition,
  type NewEvent,
  type RecordedEvent,
  type Upcaster,
} from './types';

interface EventRow {
  global_position: string | number;
  transaction_id: string;
  event_id: string;
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: Record<string, unknown>;
  organization: string;
  environment: Environment;
  occurred_at: Date | string;
}

const EVENT_COLUMNS = `global_position, transaction_id::text AS transaction_id, event_id::text AS event_id,
  stream_id, stream_version, type, schema_version, data, organization, environment, occurred_at`;

/** A row of a log page: the horizon, then an event's columns (all null when none is left). */
type PageRow = { now_complete: string; then_complete: string } & {
  [Column in keyof EventRow]: EventRow[Column] | null;
};

/** What an append reads back, in one row: only what the database assigned. */
interface AppendedRow {
  first_version: number | string | null;
  /** The events' global positions in stream order, comma-separated; null when nothing was appended. */
  positions: string | null;
  transaction_id: string;
}

const UNIQUE_VIOLATION = '23505';

/** What an event's `metadata` column holds; absent (null) on events appended before it existed. */
interface EventMetadata {
  actor?: Actor;
}

/** The metadata of events appended now: the actor of the request being served, if any. */
function eventMetadata(): string | null {
  const actor = currentActor();
  return actor ? JSON.stringify({ actor } satisfies EventMetadata) : null;
}

const actorOf = (metadata: EventMetadata | null): Actor => {
  const parsed = Actor.safeParse(metadata?.actor);
  return parsed.success ? parsed.data : SYSTEM_ACTOR;
};

type HistoryRow = Pick<
  EventRow,
  'stream_version' | 'type' | 'data' | 'organization' | 'environment' | 'occurred_at'
> & {
  metadata: EventMetadata | null;
};

/** One event of a stream as a record's history shows it. */
export interface HistoryEvent {
  version: number;
  type: string;
  data: Record<string, unknown>;
  organization: string;
  environment: Environment;
  occurredAt: string;
  actor: Actor;
}

/** One stream's part of `appendMany`. */
export interface StreamAppend {
  stream: string;
  events: NewEvent[];
  options: AppendOptions;
}

/** Appends and reads inside one open transaction, next to the caller's own read-model writes. */
export interface EventStoreTransaction extends SqlExecutor {
  append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult>;
  /**
   * Appends to several streams (each named once) in one statement: every stream must be at its
   * expected version (one with no events is only checked), else nothing is written and it
   * throws ExpectedVersionConflictError. Results in the order given. For work on many
   * aggregates at once (a batch of renewals) without a round trip per stream.
   */
  appendMany(appends: StreamAppend[]): Promise<AppendResult[]>;
}

/** An aggregate's state folded up to `streamVersion`, by the `evolve` of `snapshotVersion`. */
export interface Snapshot<State = unknown> {
  streamVersion: number;
  snapshotVersion: number;
  state: State;
}

export interface EventStoreOptions {
  /** The owning service's PostgreSQL schema, e.g. `catalog`. */
  schema: string;
  upcast?: Upcaster;
}

/**
 * Event store on PostgreSQL or PGlite (same SQL). Streams are `<type>-<id>`; each append checks
 * the stream's expected version in the same statement that inserts, so of concurrent writers
 * with the same expectation exactly one wins and the others get ExpectedVersionConflictError.
 */
export class EventStore {
  readonly tables: ReturnType<typeof tablesOf>;
  private readonly appended = new EventEmitter();

  /** SQL for the transaction id below which the log is complete: see `logHorizon`. */
  private readonly horizon: string;

  constructor(
    readonly database: Database,
    private readonly options: EventStoreOptions,
  ) {
    this.tables = tablesOf(options.schema);
    this.horizon = logHorizon(database.kind, this.tables.events);
    this.appended.setMaxListeners(0);
  }

  async migrate(): Promise<void> {
    await this.migrateSchema(eventStoreDdl(this.options.schema));
  }

  /** Runs DDL of tables in this store's schema (a read model's), under the schema's migration lock. */
  migrateSchema(ddl: string): Promise<void> {
    return migrateSchema(this.database, this.options.schema, ddl);
  }

  /**
   * One append on its own: a single statement, atomic without BEGIN/COMMIT, so one round trip.
   * Use `transaction` to write read models with it.
   */
  async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    const result = await this.appendIn(this.database, stream, events, options);
    if (result.events.length > 0) this.appended.emit('appended');
    return result;
  }

  /**
   * Runs `fn` in one transaction. Events it appends and rows it writes commit together or not
   * at all, which is how read models stay consistent with their streams.
   */
  async transaction<T>(fn: (tx: EventStoreTransaction) => Promise<T>): Promise<T> {
    let appendedAny = false;
    const result = await this.database.transaction(
      (sql) =>
        fn({
          query: (text, params) => sql.query(text, params),
          write: (text, params) => sql.write(text, params),
          append: async (stream, events, options) => {
            const appended = await this.appendIn(sql, stream, events, options);
            appendedAny ||= appended.events.length > 0;
            return appended;
          },
          appendMany: async (appends) => {
            const appended = await this.appendManyIn(sql, appends);
            appendedAny ||= appended.some((result) => result.events.length > 0);
            return appended;
          },
        }),
      // Before anything can give the transaction an id: readers count on it (logHorizon).
      { firstStatement: `LOCK TABLE ${this.tables.events} IN ROW EXCLUSIVE MODE` },
    );
    if (appendedAny) this.appended.emit('appended');
    return result;
  }

  async readStream(stream: string, fromVersion = 0): Promise<RecordedEvent[]> {
    const { rows } = await this.database.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM ${this.tables.events}
       WHERE stream_id = $1 AND stream_version > $2 ORDER BY stream_version`,
      [stream, fromVersion],
    );
    return rows.map((row) => this.toRecorded(row));
  }

  /**
   * One page of a stream's history for people (a record's event history): the events after
   * `afterVersion` in order, each with its metadata (who appended it), `limit` at most, and
   * whether more follow. Upcasting is left out: the history shows what was recorded.
   */
  async readHistory(
    stream: string,
    page: { afterVersion: number; limit: number },
  ): Promise<{ events: HistoryEvent[]; hasMore: boolean }> {
    const { rows } = await this.database.query<HistoryRow>(
      `SELECT stream_version, type, data, organization, environment, occurred_at, metadata
       FROM ${this.tables.events} WHERE stream_id = $1 AND stream_version > $2 ORDER BY stream_version LIMIT $3`,
      [stream, page.afterVersion, page.limit + 1],
    );
    const events = rows.slice(0, page.limit).map((row) => ({
      version: row.stream_version,
      type: row.type,
      data: row.data,
      organization: row.organization,
      environment: row.environment,
      occurredAt: new Date(row.occurred_at).toISOString(),
      actor: actorOf(row.metadata),
    }));
    return { events, hasMore: rows.length > page.limit };
  }

  /** Several streams read at once (one query): each stream's events in order, `[]` for one that is empty. */
  async readStreams(streams: string[], sql: SqlExecutor = this.database): Promise<Map<string, RecordedEvent[]>> {
    const byStream = new Map<string, RecordedEvent[]>(streams.map((stream) => [stream, []]));
    if (streams.length === 0) return byStream;
    const { rows } = await sql.query<EventRow>(
      `SELECT ${EVENT_COLUMNS} FROM ${this.tables.events}
       WHERE stream_id = ANY($1::text[]) ORDER BY stream_id, stream_version`,
      [streams],
    );
    for (const row of rows) byStream.get(row.stream_id)?.push(this.toRecorded(row));
    return byStream;
  }

  /**
   * Events after `after` in log order. Only transactions older than the oldest one that may
   * still append are visible, so a reader never moves past an event that has yet to commit.
   */
  async readAll(after: LogPosition, limit = 500): Promise<RecordedEvent[]> {
    return this.readLog('($1::xid8, $2::bigint)', [after.transactionId, after.globalPosition], limit);
  }

  /**
   * `readAll` from the stored checkpoint `name` (the start of the log without one), in one
   * statement: a subscriber's poll is one round trip, not two.
   */
  async readAfterCheckpoint(name: string, limit = 500): Promise<RecordedEvent[]> {
    // The position as two scalar subqueries, which the planner evaluates first and uses as the
    // index condition; a join with the checkpoint row would filter the whole log instead.
    const position = `(
      coalesce((SELECT transaction_id FROM ${this.tables.checkpoints} WHERE name = $1), $2::xid8),
      coalesce((SELECT global_position FROM ${this.tables.checkpoints} WHERE name = $1), $3::bigint))`;
    return this.readLog(position, [name, START_OF_LOG.transactionId, START_OF_LOG.globalPosition], limit);
  }

  /**
   * One page of the log after `position` (SQL over `params`), below the log's horizon.
   * A transaction that ends while the statement runs can hold the page back although it
   * committed; the statement then says how far the log is complete for any later statement,
   * and one more read goes that far (logHorizon).
   */
  private async readLog(position: string, params: unknown[], limit: number): Promise<RecordedEvent[]> {
    const n = params.length;
    // `e.` matters: a bare ORDER BY name means the output column, here the text form, which
    // sorts '10' before '9' and cannot use the (transaction_id, global_position) index.
    const text = `WITH ${this.horizon}
      SELECT h.now_complete::text AS now_complete, h.then_complete::text AS then_complete, page.*
      FROM horizon h LEFT JOIN LATERAL (
        SELECT ${EVENT_COLUMNS} FROM ${this.tables.events} e
         WHERE (e.transaction_id, e.global_position) > ${position}
           AND e.transaction_id < greatest(h.now_complete, $${n + 2}::xid8)
         ORDER BY e.transaction_id, e.global_position
         LIMIT $${n + 1}) page ON true`;
    let completeBefore = '0';
    for (let read = 1; ; read++) {
      const { rows } = await this.database.query<PageRow>(text, [...params, limit, completeBefore]);
      const events = rows.filter((row) => row.event_id !== null).map((row) => this.toRecorded(row as EventRow));
      const { now_complete: now, then_complete: then } = rows[0]!;
      const readTo = BigInt(now) > BigInt(completeBefore) ? BigInt(now) : BigInt(completeBefore);
      if (events.length === limit || read === 2 || BigInt(then) <= readTo) return events;
      completeBefore = then;
    }
  }

  async loadCheckpoint(name: string, sql: SqlExecutor = this.database): Promise<LogPosition | undefined> {
    const { rows } = await sql.query<{ transaction_id: string; global_position: string | number }>(
      `SELECT transaction_id::text AS transaction_id, global_position FROM ${this.tables.checkpoints} WHERE name = $1`,
      [name],
    );
    const row = rows[0];
    return row && { transactionId: row.transaction_id, globalPosition: Number(row.global_position) };
  }

  async saveCheckpoint(name: string, position: LogPosition, sql: SqlExecutor = this.database): Promise<void> {
    await sql.query(
      `INSERT INTO ${this.tables.checkpoints} (name, transaction_id, global_position, updated_at)
       VALUES ($1, $2::xid8, $3, now())
       ON CONFLICT (name) DO UPDATE SET transaction_id = EXCLUDED.transaction_id,
         global_position = EXCLUDED.global_position, updated_at = now()`,
      [name, position.transactionId, position.globalPosition],
    );
  }

  /**
   * The stream's snapshot of `snapshotVersion` (if any) and the events after it, in one
   * statement: what a command on an aggregate with snapshots reads (the events come back as one
   * JSON array, at most a snapshot interval of them).
   */
  async readFromSnapshot<State>(
    stream: string,
    snapshotVersion: number,
    sql: SqlExecutor = this.database,
  ): Promise<{ snapshot: Snapshot<State> | undefined; events: RecordedEvent[] }> {
    const read = await this.readManyFromSnapshot<State>([{ stream }], snapshotVersion, sql);
    return read.get(stream)!;
  }

  /**
   * `readFromSnapshot` of several streams in one statement (each named once): what a batch of
   * commands on as many aggregates reads. A stream given `after` (its state is held up to that
   * version) is read from there, without its snapshot. Every stream is in the answer, an empty
   * one with no snapshot and no events.
   */
  async readManyFromSnapshot<State>(
    wanted: Array<{ stream: string; after?: number }>,
    snapshotVersion: number,
    sql: SqlExecutor = this.database,
  ): Promise<Map<string, { snapshot: Snapshot<State> | undefined; events: RecordedEvent[] }>> {
    const read = new Map<string, { snapshot: Snapshot<State> | undefined; events: RecordedEvent[] }>();
    if (wanted.length === 0) return read;
    const { rows } = await sql.query<{
      stream_id: string;
      snapshot_at: number | null;
      state: State | null;
      events: EventRow[];
    }>(streamsFromSnapshotQuery(this.tables), [
      wanted.map((w) => w.stream),
      wanted.map((w) => w.after ?? null),
      snapshotVersion,
    ]);
    for (const row of rows) {
      const snapshot =
        row.snapshot_at === null
          ? undefined
          : { streamVersion: row.snapshot_at, snapshotVersion, state: row.state as State };
      read.set(row.stream_id, { snapshot, events: row.events.map((event) => this.toRecorded(event)) });
    }
    return read;
  }

  /** The stream's snapshot if one was taken by `snapshotVersion`; any other is stale and ignored. */
  async readSnapshot<State>(
    stream: string,
    snapshotVersion: number,
    sql: SqlExecutor = this.database,
  ): Promise<Snapshot<State> | undefined> {
    const { rows } = await sql.query<{ stream_version: number; state: State }>(
      `SELECT stream_version, state FROM ${this.tables.snapshots} WHERE stream_id = $1 AND snapshot_version = $2`,
      [stream, snapshotVersion],
    );
    const row = rows[0];
    return row && { streamVersion: row.stream_version, snapshotVersion, state: row.state };
  }

  /**
   * Keeps one snapshot per stream: this one replaces the stored one unless that is of the same
   * `snapshotVersion` and as far along, so a slower writer never moves a snapshot back. The
   * state must be plain JSON (no Date, Map, Set, undefined or non-finite numbers).
   */
  async saveSnapshot(stream: string, snapshot: Snapshot, sql: SqlExecutor = this.database): Promise<void> {
    await sql.query(
      `INSERT INTO ${this.tables.snapshots} (stream_id, stream_version, snapshot_version, state, taken_at)
       VALUES ($1, $2, $3, $4::json, now())
       ON CONFLICT (stream_id) DO UPDATE SET stream_version = EXCLUDED.stream_version,
         snapshot_version = EXCLUDED.snapshot_version, state = EXCLUDED.state, taken_at = now()
       WHERE ${this.tables.snapshots}.snapshot_version <> EXCLUDED.snapshot_version
          OR ${this.tables.snapshots}.stream_version < EXCLUDED.stream_version`,
      [stream, snapshot.streamVersion, snapshot.snapshotVersion, JSON.stringify(snapshot.state)],
    );
  }

  /** Called after every commit that appended events, for in-process subscribers to wake up. */
  onAppended(listener: () => void): () => void {
    this.appended.on('appended', listener);
    return () => this.appended.off('appended', listener);
  }

  private async appendIn(
    sql: SqlExecutor,
    stream: string,
    events: NewEvent[],
    options: AppendOptions,
  ): Promise<AppendResult> {
    if (events.length === 0) {
      const current = await this.streamVersion(sql, stream);
      this.assertExpected(stream, options.expectedVersion, current);
      return { nextExpectedVersion: current, events: [] };
    }
    const input = events.map((event, index) => ({
      ord: index + 1,
      event_id: event.id ?? newEventId(),
      type: event.type,
      schema_version: event.schemaVersion ?? 1,
      data: event.data,
    }));
    const json = JSON.stringify(input);
    let rows: AppendedRow[];
    try {
      ({ rows } = await sql.query<AppendedRow>(
        // One row back for the whole batch (the positions in stream order), not one per event.
        `WITH current AS (
           SELECT coalesce(max(stream_version), 0) AS version FROM ${this.tables.events} WHERE stream_id = $1
         ), appended AS (
           INSERT INTO ${this.tables.events}
             (event_id, stream_id, stream_version, type, schema_version, data, organization, environment, occurred_at,
              metadata)
           SELECT e.event_id, $1, current.version + e.ord, e.type, e.schema_version, e.data, $3, $4, $5, $7::jsonb
           FROM current, jsonb_to_recordset($2::jsonb)
             AS e(ord integer, event_id uuid, type text, schema_version integer, data jsonb)
           WHERE $6::integer IS NULL OR current.version = $6::integer
           ORDER BY e.ord
           RETURNING global_position, stream_version
         )
         SELECT min(stream_version) AS first_version,
           string_agg(global_position::text, ',' ORDER BY stream_version) AS positions,
           pg_current_xact_id()::text AS transaction_id
         FROM appended`,
        [
          stream,
          json,
          options.organization,
          options.environment,
          options.occurredAt.toISOString(),
          options.expectedVersion === 'any' ? null : options.expectedVersion,
          eventMetadata(),
        ],
      ));
    } catch (error) {
      // A concurrent writer took the same stream version first.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) {
        throw new ExpectedVersionConflictError(stream, options.expectedVersion);
      }
      throw error;
    }
    const appended = rows[0];
    if (!appended?.positions) throw new ExpectedVersionConflictError(stream, options.expectedVersion);
    // The events are built from what was sent rather than sent back: the data parsed from the
    // JSON that was inserted (no Date or undefined survives), without a second trip of every
    // payload through the database and the driver. Built directly: spreading a row object into
    // a wider one cost about 10 µs an event.
    const sent = JSON.parse(json) as typeof input;
    const positions = appended.positions.split(',');
    const firstVersion = Number(appended.first_version);
    const occurredAt = options.occurredAt.toISOString();
    const recorded = sent.map((event, index) =>
      this.upcast({
        id: event.event_id,
        type: event.type,
        schema_version: event.schema_version,
        stream,
        stream_version: firstVersion + index,
        global_position: Number(positions[index]),
        occurred_at: occurredAt,
        organization: options.organization,
        environment: options.environment,
        data: event.data,
        transaction_id: appended.transaction_id,
      }),
    );
    return { nextExpectedVersion: firstVersion + recorded.length - 1, events: recorded };
  }

  private async appendManyIn(sql: SqlExecutor, appends: StreamAppend[]): Promise<AppendResult[]> {
    if (appends.length === 0) return [];
    if (new Set(appends.map((a) => a.stream)).size !== appends.length) {
      throw new Error('appendMany names a stream more than once');
    }
    const expectations = appends.map(({ stream, options }) => ({
      stream_id: stream,
      expected: options.expectedVersion === 'any' ? null : options.expectedVersion,
    }));
    const input = appends.flatMap(({ stream, events, options }) =>
      events.map((event, index) => ({
        stream_id: stream,
        ord: index + 1,
        event_id: event.id ?? newEventId(),
        type: event.type,
        schema_version: event.schemaVersion ?? 1,
        data: event.data,
        organization: options.organization,
        environment: options.environment,
        occurred_at: options.occurredAt.toISOString(),
      })),
    );
    const conflict = () => {
      const first = appends[0]!;
      return new ExpectedVersionConflictError(
        appends.length === 1 ? first.stream : `${first.stream} (and ${appends.length - 1} more)`,
        first.options.expectedVersion,
      );
    };
    const streams = streamVersionsQuery(this.tables.events);
    if (input.length === 0) {
      const { rows } = await sql.query<{ stale: number }>(
        `WITH streams AS (${streams})
         SELECT count(*)::integer AS stale FROM streams WHERE expected IS NOT NULL AND version <> expected`,
        [JSON.stringify(expectations)],
      );
      if (rows[0]!.stale > 0) throw conflict();
      return Promise.all(appends.map(({ stream, options }) => this.unchanged(sql, stream, options)));
    }
    const inputJson = JSON.stringify(input);
    let rows: Array<Pick<EventRow, 'global_position' | 'transaction_id' | 'event_id' | 'stream_version'>>;
    try {
      ({ rows } = await sql.query(
        `WITH streams AS (${streams}),
         input AS (
           SELECT row_number() OVER () AS idx, r.*
           FROM jsonb_to_recordset($2::jsonb) AS r(stream_id text, ord integer, event_id uuid, type text,
             schema_version integer, data jsonb, organization text, environment text, occurred_at timestamptz)
         )
         INSERT INTO ${this.tables.events}
           (event_id, stream_id, stream_version, type, schema_version, data, organization, environment, occurred_at,
            metadata)
         SELECT i.event_id, i.stream_id, s.version + i.ord, i.type, i.schema_version, i.data, i.organization,
           i.environment, i.occurred_at, $3::jsonb
         FROM input i JOIN streams s ON s.stream_id = i.stream_id
         WHERE NOT EXISTS (SELECT 1 FROM streams WHERE expected IS NOT NULL AND version <> expected)
         ORDER BY i.idx
         RETURNING global_position, transaction_id::text AS transaction_id, event_id::text AS event_id, stream_version`,
        [JSON.stringify(expectations), inputJson, eventMetadata()],
      ));
    } catch (error) {
      // A concurrent writer took one of the stream versions first.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) throw conflict();
      throw error;
    }
    if (rows.length !== input.length) throw conflict();
    // Built from what was sent, as in `append`: only the positions come back, not every payload.
    const sent = new Map((JSON.parse(inputJson) as typeof input).map((event) => [event.event_id.toLowerCase(), event]));
    const recorded = new Map<string, RecordedEvent[]>(appends.map(({ stream }) => [stream, []]));
    for (const row of rows) {
      const event = sent.get(row.event_id)!;
      recorded.get(event.stream_id)!.push(
        this.upcast({
          id: row.event_id,
          type: event.type,
          schema_version: event.schema_version,
          stream: event.stream_id,
          stream_version: row.stream_version,
          global_position: Number(row.global_position),
          occurred_at: event.occurred_at,
          organization: event.organization,
          environment: event.environment as Environment,
          data: event.data,
          transaction_id: row.transaction_id,
        }),
      );
    }
    return Promise.all(
      appends.map(async ({ stream, options }) => {
        const events = recorded.get(stream)!.sort((a, b) => a.stream_version - b.stream_version);
        if (events.length === 0) return this.unchanged(sql, stream, options);
        return { nextExpectedVersion: events.at(-1)!.stream_version, events };
      }),
    );
  }

  /** The result of appending nothing to a stream found at its expected version. */
  private async unchanged(sql: SqlExecutor, stream: string, options: AppendOptions): Promise<AppendResult> {
    const version = options.expectedVersion === 'any' ? await this.streamVersion(sql, stream) : options.expectedVersion;
    return { nextExpectedVersion: version, events: [] };
  }

  private async streamVersion(sql: SqlExecutor, stream: string): Promise<number> {
    const { rows } = await sql.query<{ version: number }>(
      `SELECT coalesce(max(stream_version), 0)::integer AS version FROM ${this.tables.events} WHERE stream_id = $1`,
      [stream],
    );
    return rows[0]?.version ?? 0;
  }

  private assertExpected(stream: string, expected: AppendOptions['expectedVersion'], actual: number): void {
    if (expected !== 'any' && expected !== actual) throw new ExpectedVersionConflictError(stream, expected);
  }

  private toRecorded(row: EventRow): RecordedEvent {
    return this.upcast({
      id: row.event_id,
      type: row.type,
      schema_version: row.schema_version,
      stream: row.stream_id,
      stream_version: row.stream_version,
      global_position: Number(row.global_position),
      occurred_at: new Date(row.occurred_at).toISOString(),
      organization: row.organization,
      environment: row.environment,
      data: row.data,
      transaction_id: row.transaction_id,
    });
  }

  private upcast(event: RecordedEvent): RecordedEvent {
    return this.options.upcast ? this.options.upcast(event) : event;
  }
}

/**
 * A CTE `horizon`: transaction ids below which the log is complete, that is every transaction
 * older than it that appended has committed or rolled back, so a reader may move past
 * everything before it. `now_complete` holds for the statement's own snapshot,
 * `then_complete` for any statement that starts after this one.
 *
 * `pg_snapshot_xmin`, the oldest transaction running anywhere in the cluster, would do for
 * both, but then one long write in any schema or database (a bulk update, another service's
 * slow transaction) holds back every relay and projection. So on PostgreSQL a running
 * transaction is passed over when it is known not to append here: it holds its own id
 * (ExclusiveLock on its transactionid, which only the owner holds) and no lock on this events
 * table. That holds because every appender locks the table before it can have an id: a single
 * append through the INSERT itself, a transaction through `LOCK TABLE` sent with BEGIN
 * (`transaction`). Anything else that writes to the table must do the same.
 *
 * pg_locks reads the per-backend fast-path locks (where a table's ROW EXCLUSIVE usually is)
 * before the shared lock table (where transaction ids are), so an appender whose id is seen
 * there was seen holding the table too. A transaction in the snapshot whose id is no longer
 * held has ended after the snapshot: its events may be invisible to this statement, so it
 * bounds `now_complete`, but a later statement sees them, so it does not bound
 * `then_complete`. PGlite runs one transaction at a time: the oldest running one is exact.
 */
function logHorizon(kind: Database['kind'], events: string): string {
  if (kind === 'pglite') {
    return `horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS now_complete,
      pg_snapshot_xmin(pg_current_snapshot()) AS then_complete)`;
  }
  return `locks AS MATERIALIZED (
      SELECT locktype, transactionid, pid FROM pg_locks
       WHERE granted AND pid IS NOT NULL
         AND ((locktype = 'transactionid' AND mode = 'ExclusiveLock')
           OR (locktype = 'relation' AND relation = '${events}'::regclass))),
    running AS (
      SELECT running.xid, owner.pid IS NULL AS ended,
        EXISTS (SELECT 1 FROM locks held WHERE held.locktype = 'relation' AND held.pid = owner.pid) AS appender
      FROM pg_snapshot_xip(pg_current_snapshot()) AS running(xid)
      LEFT JOIN locks owner ON owner.locktype = 'transactionid' AND owner.transactionid = running.xid::xid),
    horizon AS (
      SELECT least(pg_snapshot_xmax(pg_current_snapshot()),
          (SELECT min(xid) FROM running WHERE appender OR ended)) AS now_complete,
        least(pg_snapshot_xmax(pg_current_snapshot()), (SELECT min(xid) FROM running WHERE appender)) AS then_complete)`;
}

/**
 * Each stream of `$1` (`[{ stream_id, expected }]`) with its version now, by one index lookup
 * each: a join with the log is planned once, while the log is small, as a scan of the whole log,
 * which a prepared statement then keeps however long the log grows.
 */
export const streamVersionsQuery = (events: string): string =>
  `SELECT s.stream_id, s.expected,
     coalesce((SELECT max(e.stream_version) FROM ${events} e WHERE e.stream_id = s.stream_id), 0) AS version
   FROM jsonb_to_recordset($1::jsonb) AS s(stream_id text, expected integer)`;

/**
 * `readManyFromSnapshot`'s statement: each stream of `$1` (held up to `$2`'s version, or from its
 * snapshot of version `$3`) with its events after that, the snapshot and the events each by one
 * index lookup (LATERAL, kept apart by its LIMIT). A join with the snapshots was planned, while
 * the table was small, as a scan of every snapshot, which a prepared statement then keeps.
 */
export const streamsFromSnapshotQuery = (tables: Pick<ReturnType<typeof tablesOf>, 'events' | 'snapshots'>): string =>
  `SELECT wanted.stream_id, s.stream_version AS snapshot_at, s.state,
     (SELECT coalesce(json_agg(e ORDER BY e.stream_version), '[]'::json) FROM (
        SELECT ${EVENT_COLUMNS} FROM ${tables.events}
        WHERE stream_id = wanted.stream_id AND stream_version > coalesce(wanted.after, s.stream_version, 0)
      ) e) AS events
   FROM unnest($1::text[], $2::integer[]) AS wanted(stream_id, after)
   LEFT JOIN LATERAL (SELECT s.stream_version, s.state FROM ${tables.snapshots} s
     WHERE wanted.after IS NULL AND s.stream_id = wanted.stream_id AND s.snapshot_version = $3 LIMIT 1) s ON true`;
