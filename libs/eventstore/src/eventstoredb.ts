import { newEventId } from './event-id';
import {
  ANY,
  EventStoreDBClient,
  NO_STREAM,
  START,
  excludeSystemEvents,
  StreamNotFoundError,
  WrongExpectedVersionError,
  jsonEvent,
  streamNameFilter,
  type AppendExpectedRevision,
  type Position,
  type RecordedEvent as StoredEvent,
} from '@eventstore/db-client';
import { Actor, type Environment, SYSTEM_ACTOR } from '@billing/contracts';
import { currentActor } from './acting';
import type { HistoryEvent } from './event-store';
import {
  type AppendOptions,
  type AppendResult,
  ExpectedVersionConflictError,
  type NewEvent,
  type RecordedEvent,
} from './types';

/** The envelope's fields beside `data`, kept in each event's metadata. */
interface EnvelopeMetadata {
  schema_version: number;
  organization: string;
  environment: Environment;
  occurred_at: string;
  /** Who appended it, as the SQL store's `metadata` column keeps it; absent outside a request. */
  actor?: Actor;
}

export interface EventStoreDbOptions {
  /** Put before every stream name, so that one deployment's (or test's) streams stay apart. */
  streamPrefix?: string;
}

export interface EventStoreDbSubscription {
  stop(): Promise<void>;
}

/**
 * The event store on EventStoreDB (`EVENTSTORE_URL`, e.g. `esdb://host:2113?tls=false`): one
 * stream per aggregate, optimistic concurrency through the expected revision, and a
 * subscription to the whole log from a position the caller keeps. It offers what
 * `test/stream.contract.ts` asks, not the SQL store's transactions (read models in the append's
 * transaction, appends to several streams at once): docs/decisions/0012-eventstoredb.md.
 */
export class EventStoreDbStreams {
  private readonly prefix: string;

  constructor(
    private readonly client: EventStoreDBClient,
    options: EventStoreDbOptions = {},
  ) {
    this.prefix = options.streamPrefix ?? '';
  }

  static connect(url: string, options: EventStoreDbOptions = {}): EventStoreDbStreams {
    return new EventStoreDbStreams(EventStoreDBClient.connectionString(url), options);
  }

  /** Appends at `expectedVersion` (0: the stream must not exist; n: its last event is n). */
  async append(stream: string, events: NewEvent[], options: AppendOptions): Promise<AppendResult> {
    const metadata: EnvelopeMetadata = {
      schema_version: 1,
      organization: options.organization,
      environment: options.environment,
      occurred_at: options.occurredAt.toISOString(),
    };
    const actor = currentActor();
    if (actor) metadata.actor = actor;
    const written = events.map((e) =>
      jsonEvent({
        id: e.id ?? newEventId(),
        type: e.type,
        // As the SQL store keeps it: JSON, so dates become strings and undefined fields go.
        data: JSON.parse(JSON.stringify(e.data)) as Record<string, unknown>,
        metadata: { ...metadata, schema_version: e.schemaVersion ?? 1 },
      }),
    );
    let next: bigint;
    try {
      const result = await this.client.appendToStream(this.prefix + stream, written, {
        expectedRevision: expectedRevision(options.expectedVersion),
      });
      next = result.nextExpectedRevision;
    } catch (error) {
      if (error instanceof WrongExpectedVersionError)
        throw new ExpectedVersionConflictError(stream, options.expectedVersion);
      throw error;
    }
    const nextExpectedVersion = Number(next) + 1;
    // Read back, so that the result is what a read gives (log positions included).
    const recorded = await this.readStream(stream, nextExpectedVersion - events.length);
    return { nextExpectedVersion, events: recorded.slice(0, events.length) };
  }

  /** The stream's events after `fromVersion`, oldest first; a stream that does not exist is empty. */
  async readStream(stream: string, fromVersion = 0): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(this.prefix + stream, {
        fromRevision: BigInt(fromVersion),
      })) {
        if (resolved.event) events.push(this.toRecorded(resolved.event));
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  /** One page of a stream's history for people, as the SQL store's `readHistory` gives it. */
  async readHistory(
    stream: string,
    page: { afterVersion: number; limit: number },
  ): Promise<{ events: HistoryEvent[]; hasMore: boolean }> {
    const events: HistoryEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(this.prefix + stream, {
        fromRevision: BigInt(page.afterVersion),
        maxCount: page.limit + 1,
      })) {
        if (resolved.event) events.push(this.toHistory(resolved.event));
      }
    } catch (error) {
      if (!(error instanceof StreamNotFoundError)) throw error;
    }
    return { events: events.slice(0, page.limit), hasMore: events.length > page.limit };
  }

  /**
   * Every event of this store's streams after `from` (from the start when absent), in log order,
   * one at a time; `handle` gets the event's position, which the caller stores as its checkpoint
   * once the event's effect is done, and passes back here after a restart.
   */
  subscribe(
    from: Position | undefined,
    handle: (event: RecordedEvent, position: Position) => Promise<void>,
  ): EventStoreDbSubscription {
    const subscription = this.client.subscribeToAll({
      fromPosition: from ?? START,
      filter: this.prefix ? streamNameFilter({ prefixes: [this.prefix] }) : excludeSystemEvents(),
    });
    const running = (async () => {
      for await (const resolved of subscription) {
        const event = resolved.event;
        if (!event?.position || event.streamId.startsWith('$') || !event.streamId.startsWith(this.prefix)) continue;
        await handle(this.toRecorded(event), event.position);
      }
    })();
    return {
      stop: async () => {
        await subscription.unsubscribe();
        await running.catch(() => undefined);
      },
    };
  }

  async close(): Promise<void> {
    await this.client.dispose();
  }

  private toRecorded(event: StoredEvent): RecordedEvent {
    const metadata = event.metadata as unknown as EnvelopeMetadata;
    return {
      id: event.id,
      type: event.type,
      schema_version: metadata.schema_version,
      stream: event.streamId.slice(this.prefix.length),
      stream_version: Number(event.revision) + 1,
      // The prepare position: distinct for every event, also within one append.
      global_position: Number(event.position?.prepare ?? 0n),
      occurred_at: metadata.occurred_at,
      organization: metadata.organization,
      environment: metadata.environment,
      data: event.data as Record<string, unknown>,
      transaction_id: '',
    };
  }

  private toHistory(event: StoredEvent): HistoryEvent {
    const recorded = this.toRecorded(event);
    const actor = Actor.safeParse((event.metadata as unknown as EnvelopeMetadata).actor);
    return {
      version: recorded.stream_version,
      type: recorded.type,
      data: recorded.data,
      organization: recorded.organization,
      environment: recorded.environment,
      occurredAt: recorded.occurred_at,
      actor: actor.success ? actor.data : SYSTEM_ACTOR,
    };
  }
}

function expectedRevision(expected: AppendOptions['expectedVersion']): AppendExpectedRevision {
  if (expected === 'any') return ANY;
  if (expected === 0) return NO_STREAM;
  return BigInt(expected - 1);
}
