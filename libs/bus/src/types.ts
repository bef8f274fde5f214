import type { DomainEventEnvelope } from '@billing/contracts';

export interface OutgoingMessage {
  /** Messages with one key keep their order: the aggregate's stream id. */
  key: string;
  value: DomainEventEnvelope;
  headers?: Record<string, string>;
}

/** A message as handed to a handler: its value a domain event, or what the subscription's `readValue` read. */
export interface ConsumedMessage<Value = DomainEventEnvelope> {
  topic: string;
  partition: number;
  offset: string;
  key: string;
  value: Value;
  headers: Record<string, string>;
}

export type MessageHandler<Value = DomainEventEnvelope> = (message: ConsumedMessage<Value>) => Promise<void>;

/**
 * Handles several messages of one partition at once, in their order, all or nothing: when it
 * throws, none of them counts as handled and the bus hands them to the `MessageHandler` one by
 * one (with its retries, and the DLQ for a message that keeps failing).
 */
export type BatchHandler<Value = DomainEventEnvelope> = (messages: ConsumedMessage<Value>[]) => Promise<void>;

/** A message handler that can also take a batch (`exactlyOnce` returns one); buses use `batch` when they have several messages. */
export type BatchingMessageHandler<Value = DomainEventEnvelope> = MessageHandler<Value> & {
  batch?: BatchHandler<Value>;
};

export interface RetryPolicy {
  /** Tries in all, the first included, before the message is parked on the DLQ. */
  maxAttempts: number;
  initialDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, initialDelayMs: 200, maxDelayMs: 10_000 };

export interface SubscribeOptions<Value = DomainEventEnvelope> {
  /** One consumer group per service: each message reaches one member of the group. */
  groupId: string;
  topics: string[];
  /** With a `batch`, the bus hands it the messages of a partition it has at once (at most 100). */
  handler: BatchingMessageHandler<Value>;
  retry?: Partial<RetryPolicy>;
  /**
   * For a topic whose messages are not domain events (the usage topic, which merchants produce
   * to): reads a message's JSON value, or says why it is refused (the message is parked).
   */
  readValue?: (json: unknown) => Value | ValueRefused;
}

/** `readValue`'s answer for a value it refuses. */
export type ValueRefused = { refused: string };

export interface Subscription {
  /** Stops taking messages; a message in flight finishes or is left uncommitted. */
  stop(): Promise<void>;
}

/**
 * Keyed publish/subscribe between services: Kafka in the distributed topology, the services'
 * database (`DatabaseBus`) in the embedded one. Delivery is at-least-once; consumers
 * deduplicate on the event id.
 */
export interface Bus {
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  /** Publishes bytes as they are, even if not a valid event: for tools and poison tests. */
  publishRaw(topic: string, key: string, value: string): Promise<void>;
  subscribe<Value = DomainEventEnvelope>(options: SubscribeOptions<Value>): Promise<Subscription>;
  close(): Promise<void>;
}

export const dlqTopicOf = (topic: string) => `${topic}.dlq`;

/** Headers a parked message carries on `<topic>.dlq`. */
export const DLQ_HEADERS = {
  reason: 'dlq-reason',
  originalTopic: 'dlq-original-topic',
  originalPartition: 'dlq-original-partition',
  originalOffset: 'dlq-original-offset',
  consumerGroup: 'dlq-consumer-group',
  attempts: 'dlq-attempts',
} as const;
