import type { DomainEventEnvelope } from '@billing/contracts';
import { EventLogSubscriber, type EventStore, type RecordedEvent, toEnvelope } from '@billing/eventstore';
import type { Bus } from './types';

export interface RelayOptions {
  /** The service's topic, `<service>.events`. */
  topic: string;
  batchSize?: number;
  pollIntervalMs?: number;
  /**
   * The longest poll interval once the log has been quiet (default 400 ms): each poll that
   * finds nothing doubles the wait from `pollIntervalMs` (100 ms). Appends of this process wake
   * the relay at once; another process's (a replica's) wait at most this long.
   */
  idlePollIntervalMs?: number;
  onError?: (error: unknown) => void;
  /** Runs after a batch is published and before its checkpoint is saved (crash tests). */
  afterPublish?: (events: RecordedEvent[]) => Promise<void> | void;
  /** Internal event type -> public dotted type; unlisted events keep their internal type. */
  publicTypes?: Readonly<Record<string, string>>;
  /**
   * Internal event type -> the topic it goes to instead of `topic` (every event type of a
   * stream goes to one topic, so a stream's events stay in order).
   */
  topicsByType?: Readonly<Record<string, string>>;
  /** CloudEvents `source` of the messages; defaults to `/<service>` from `<service>.events`. */
  source?: string;
  /** How often a standby relay (another replica holds the log's lock) tries to take over; default 1 s. */
  standbyRetryMs?: number;
  /**
   * While events keep coming, the checkpoint is saved at most this often (default 1 s), and at
   * once when the log goes quiet or the relay stops: a crash publishes again at most this much.
   */
  checkpointIntervalMs?: number;
  /**
   * How long an append waits before the relay reads (default 5 ms): the events of concurrent
   * commands go out as one batch, one read of the log and one publish instead of one each.
   */
  lingerMs?: number;
  /**
   * While appends keep coming, reads of the log begin at most this often (default 40 ms): a
   * busy log goes out in fewer, larger batches, each one read, one publish and one fetch of
   * every consumer group, instead of one every `lingerMs` with a few events.
   */
  readIntervalMs?: number;
}

const DEFAULT_LINGER_MS = 5;

const DEFAULT_READ_INTERVAL_MS = 40;

/** Saving the checkpoint after every batch was a transaction per batch for nothing but a crash. */
const DEFAULT_CHECKPOINT_INTERVAL_MS = 1000;

/**
 * Publishes a service's event log to its Kafka topic, keyed by stream id. The checkpoint is
 * saved only after the broker acknowledged the batch, and while events keep coming at most once
 * a `checkpointIntervalMs`: a crash publishes again what was published since the last save
 * (consumers deduplicate), and nothing is ever lost.
 *
 * Of the relays of one log (one per replica of the service), only the holder of the log's relay
 * lock publishes; the others stand by and take over within seconds of the holder stopping,
 * crashing or losing its database connection. Two relays reading one checkpoint would publish
 * every event twice.
 */
export class EventRelay {
  private readonly subscriber: EventLogSubscriber;
  private readonly lockName: string;
  private running: Promise<void> | undefined;
  private stopRequested: (() => void) | undefined;

  constructor(
    private readonly store: EventStore,
    bus: Bus,
    private readonly options: RelayOptions,
  ) {
    const source = options.source ?? `/${options.topic.replace(/\.events$/, '')}`;
    const checkpoint = `relay:${options.topic}`;
    this.lockName = `${store.tables.checkpoints}/${checkpoint}`;
    this.subscriber = new EventLogSubscriber(store, {
      name: checkpoint,
      batchSize: options.batchSize ?? 200,
      pollIntervalMs: options.pollIntervalMs ?? 100,
      idlePollIntervalMs: options.idlePollIntervalMs ?? 400,
      checkpointIntervalMs: options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS,
      lingerMs: options.lingerMs ?? DEFAULT_LINGER_MS,
      readIntervalMs: options.readIntervalMs ?? DEFAULT_READ_INTERVAL_MS,
      onError: options.onError,
      handle: async (events) => {
        for (const [topic, onTopic] of byTopic(events, options)) {
          await bus.publish(
            topic,
            onTopic.map((event) => {
              const value = publicEnvelope(event, options.publicTypes);
              return { key: event.stream, value, headers: cloudEventHeaders(value, source) };
            }),
          );
        }
        await options.afterPublish?.(events);
      },
    });
  }

  /** Relays while this relay holds the log's lock, and stands by while another one does. */
  start(): void {
    if (this.running) return;
    const stopped = new Promise<void>((resolve) => (this.stopRequested = resolve));
    this.running = this.relayWhileHolding(stopped);
  }

  /** Finishes the batch in hand and releases the lock, so that a standby takes over at once. */
  async stop(): Promise<void> {
    this.stopRequested?.();
    await this.running;
    this.running = undefined;
  }

  /** Publishes everything not yet published; returns how many events. Takes no lock: for tests and one-shot tools. */
  catchUp(): Promise<number> {
    return this.subscriber.catchUp();
  }

  private async relayWhileHolding(stopped: Promise<void>): Promise<void> {
    let isStopped = false;
    void stopped.then(() => (isStopped = true));
    while (!isStopped) {
      const lock = await this.store.database.tryLock(this.lockName).catch((error: unknown) => {
        this.options.onError?.(error);
        return undefined;
      });
      if (!lock) {
        await Promise.race([stopped, unrefDelay(this.options.standbyRetryMs ?? 1000)]);
        continue;
      }
      this.subscriber.start();
      await Promise.race([lock.lost, stopped]);
      await this.subscriber.stop();
      await lock.release();
    }
  }
}

/** A pause that does not keep the process alive on its own. */
function unrefDelay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/** The events of a batch by the topic each goes to, in log order within each. */
function byTopic(events: RecordedEvent[], { topic, topicsByType }: RelayOptions): Map<string, RecordedEvent[]> {
  const topics = new Map<string, RecordedEvent[]>();
  for (const event of events) {
    const to = topicsByType?.[event.type] ?? topic;
    const onTopic = topics.get(to);
    if (onTopic) onTopic.push(event);
    else topics.set(to, [event]);
  }
  return topics;
}

function publicEnvelope(event: RecordedEvent, publicTypes: RelayOptions['publicTypes']) {
  const envelope = toEnvelope(event);
  const publicType = publicTypes?.[envelope.type];
  return publicType ? { ...envelope, type: publicType } : envelope;
}

/**
 * The CloudEvents Kafka protocol binding in binary mode: the attributes as `ce_` headers, so
 * standard tooling can route a message without parsing it. The value stays the JSON envelope.
 */
export function cloudEventHeaders(envelope: DomainEventEnvelope, source: string): Record<string, string> {
  return {
    ce_specversion: '1.0',
    ce_id: envelope.id,
    ce_type: envelope.type,
    ce_source: source,
    ce_time: envelope.occurred_at,
    ce_subject: envelope.stream,
    'content-type': 'application/json',
  };
}
