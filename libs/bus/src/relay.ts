import type { DomainEventEnvelope } from '@billing/contracts';
import { EventLogSubscriber, type EventStore, type RecordedEvent, toEnvelope } from '@billing/eventstore';
import type { Bus } from './types';

export interface RelayOptions {
  /** The service's topic, `<service>.events`. */
  topic: string;
  batchSize?: number;
  pollIntervalMs?: number;
  onError?: (error: unknown) => void;
  /** Runs after a batch is published and before its checkpoint is saved (crash tests). */
  afterPublish?: (events: RecordedEvent[]) => Promise<void> | void;
  /** Internal event type -> public dotted type; unlisted events keep their internal type. */
  publicTypes?: Readonly<Record<string, string>>;
  /** CloudEvents `source` of the messages; defaults to `/<service>` from `<service>.events`. */
  source?: string;
}

/**
 * Publishes a service's event log to its Kafka topic, keyed by stream id. The checkpoint is
 * saved only after the broker acknowledged the batch: a crash in between publishes the batch
 * again on restart (consumers deduplicate), and nothing is ever lost.
 */
export class EventRelay {
  private readonly subscriber: EventLogSubscriber;

  constructor(store: EventStore, bus: Bus, options: RelayOptions) {
    const source = options.source ?? `/${options.topic.replace(/\.events$/, '')}`;
    this.subscriber = new EventLogSubscriber(store, {
      name: `relay:${options.topic}`,
      batchSize: options.batchSize ?? 200,
      pollIntervalMs: options.pollIntervalMs ?? 100,
      onError: options.onError,
      handle: async (events) => {
        await bus.publish(
          options.topic,
          events.map((event) => {
            const value = publicEnvelope(event, options.publicTypes);
            return { key: event.stream, value, headers: cloudEventHeaders(value, source) };
          }),
        );
        await options.afterPublish?.(events);
      },
    });
  }

  start(): void {
    this.subscriber.start();
  }

  stop(): Promise<void> {
    return this.subscriber.stop();
  }

  /** Publishes everything not yet published; returns how many events. */
  catchUp(): Promise<number> {
    return this.subscriber.catchUp();
  }
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
