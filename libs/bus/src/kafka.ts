import type { DomainEventEnvelope } from '@billing/contracts';
import {
  type ConsumerRunConfig,
  type EachBatchPayload,
  Kafka,
  type KafkaConfig,
  type KafkaMessage,
  type LogEntry,
  type Producer,
  Partitioners,
  logLevel,
} from 'kafkajs';
import {
  type DeliveryContext,
  MAX_BATCH,
  type RawMessage,
  deliver,
  deliverBatch,
  parkAndLog,
  retryPolicy,
  stoppableSleep,
} from './delivery';
import { keepConsumerRunning } from './kafka-restart';
import { type Bus, type OutgoingMessage, type SubscribeOptions, type Subscription, dlqTopicOf } from './types';

export interface KafkaBusOptions {
  brokers: string[];
  clientId: string;
  /** Partitions of topics this bus creates. */
  partitions?: number;
  /**
   * Put before every topic name and consumer group id on the broker (`<prefix>billing.events`,
   * `<prefix>billing`), so that several deployments, or test files, can share one Kafka without
   * reading each other's events or taking each other's partitions. Handlers, callers and DLQ
   * headers see the names without it.
   */
  topicPrefix?: string;
  /**
   * How long the broker waits for a consumer's heartbeat before it drops the member (default
   * 10 s): a process killed without leaving its groups holds up their next join this long.
   */
  sessionTimeoutMs?: number;
  kafka?: Partial<KafkaConfig>;
  /** Where kafkajs errors go; a pino logger fits. Defaults to JSON lines on stderr. */
  logger?: { error: (details: object, message: string) => void };
}

/** How long the broker may hold an empty fetch before answering: also how long a consumer takes to stop. */
const FETCH_MAX_WAIT_MS = 250;

/** How often a consumer commits the offsets it has handled while messages keep coming. */
const COMMIT_INTERVAL_MS = 1000;

/** What a batch's payload offers to commit its group's offsets. */
type CommitFunctions = Pick<EachBatchPayload, 'commitOffsetsIfNecessary' | 'uncommittedOffsets'>;

/**
 * A consumer's handled offsets, committed at most once a second while messages keep coming, at
 * once on a stop, and by a timer when the partition goes quiet (decision 0027). kafkajs commits
 * after every batch, one OffsetCommit request (and a write to the broker's offsets log) per batch
 * and group. A crash or a rebalance repeats at most about a second of messages; every consumer
 * records the events it handled, so a repeat changes nothing. A failed commit only means that.
 */
class OffsetsCommittedByTime {
  private latest: CommitFunctions | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly stopping: AbortSignal) {
    this.timer = setInterval(() => void this.commitIfDue(), COMMIT_INTERVAL_MS);
    this.timer.unref();
  }

  async afterBatch(payload: CommitFunctions): Promise<void> {
    this.latest = payload;
    if (this.stopping.aborted) await this.commitNow(payload);
    else await this.commitIfDue();
  }

  /** Commits what was handled so far; a batch still in flight commits its own as it ends. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    if (this.latest) await this.commitNow(this.latest);
  }

  /** kafkajs's own interval check: nothing is sent when nothing new was handled. */
  private async commitIfDue(): Promise<void> {
    await this.latest?.commitOffsetsIfNecessary().catch(() => undefined);
  }

  private async commitNow(payload: CommitFunctions): Promise<void> {
    await payload.commitOffsetsIfNecessary(payload.uncommittedOffsets()).catch(() => undefined);
  }
}

const stderrLogger = {
  error: (details: object, message: string) => process.stderr.write(`${JSON.stringify({ message, ...details })}\n`),
};

/**
 * kafkajs reports a stop in the middle of a backoff as an eachMessage error, and every
 * rebalance as a heartbeat error; both are expected, so only other errors are logged.
 */
function kafkajsLogCreator(logger: NonNullable<KafkaBusOptions['logger']>) {
  return () =>
    ({ log }: LogEntry) => {
      const { message, ...details } = log;
      const expected = /StoppedError/.test(String(log.stack ?? '')) || /rebalancing/.test(String(log.error ?? ''));
      if (!expected) logger.error({ component: 'kafkajs', ...details }, message);
    };
}

const headersOf = (headers: Record<string, unknown> | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(headers ?? {}).map(([k, v]) => [k, v === undefined ? '' : String(v)]));

/**
 * The Bus on Apache Kafka through kafkajs. Messages are keyed by stream id, so the default
 * partitioner keeps one aggregate's events in one partition, in order. Offsets are committed
 * only after the handler finished or the message was parked: at-least-once.
 */
export class KafkaBus implements Bus {
  private readonly kafka: Kafka;
  private producer: Promise<Producer> | undefined;
  private readonly subscriptions = new Set<Subscription>();
  private readonly knownTopics = new Set<string>();

  constructor(private readonly options: KafkaBusOptions) {
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: logLevel.ERROR,
      logCreator: kafkajsLogCreator(options.logger ?? stderrLogger),
      retry: { retries: 8, initialRetryTime: 100 },
      ...options.kafka,
    });
  }

  private onBroker(topic: string): string {
    return `${this.options.topicPrefix ?? ''}${topic}`;
  }

  private fromBroker(topic: string): string {
    const prefix = this.options.topicPrefix ?? '';
    return topic.startsWith(prefix) ? topic.slice(prefix.length) : topic;
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    await this.send(
      topic,
      messages.map((m) => ({ key: m.key, value: JSON.stringify(m.value), headers: m.headers })),
    );
  }

  async publishRaw(topic: string, key: string, value: string): Promise<void> {
    await this.send(topic, [{ key, value }]);
  }

  async subscribe<Value = DomainEventEnvelope>(requested: SubscribeOptions<Value>): Promise<Subscription> {
    // Values reach the handler as `readValue` reads them (domain events without it).
    const options = requested as unknown as SubscribeOptions;
    await this.ensureTopics([...options.topics, ...options.topics.map(dlqTopicOf)]);
    const controller = new AbortController();
    const consumer = this.kafka.consumer({
      // Deployments that share a broker share group names too: one group per deployment and name.
      groupId: this.onBroker(options.groupId),
      sessionTimeout: this.options.sessionTimeoutMs ?? 10_000,
      heartbeatInterval: 1000,
      // A stop waits for the fetch in flight, which the broker holds open this long when there is
      // nothing to read (kafkajs's default is 5 s: a platform of four consumers took 20 s to stop).
      // Records that arrive are answered at once whatever the wait; idle polls cost the broker little.
      maxWaitTimeInMs: FETCH_MAX_WAIT_MS,
      // kafkajs restarts a crashed consumer; a stop (StoppedError out of a backoff) is not a
      // crash to recover from, and a restart after it would reconnect and keep the process alive.
      retry: { restartOnFailure: async () => !controller.signal.aborted },
    });
    const context: DeliveryContext = {
      groupId: options.groupId,
      handler: options.handler,
      readValue: options.readValue,
      batch: options.handler.batch,
      retry: retryPolicy(options.retry),
      sleep: stoppableSleep(controller.signal),
      park: parkAndLog(
        (raw: RawMessage, headers: Record<string, string>) =>
          this.send(dlqTopicOf(raw.topic), [{ key: raw.key, value: raw.value, headers }]),
        this.options.logger ?? stderrLogger,
        options.groupId,
      ),
    };
    // A refusal no retry can mend (a session timeout outside the broker's bounds, a group it
    // denies) would otherwise restart the consumer for ever, and this subscribe never answer.
    const joined = new Promise<void>((resolve, reject) => {
      consumer.on(consumer.events.GROUP_JOIN, () => resolve());
      consumer.on(consumer.events.CRASH, ({ payload }) => {
        if ((payload.error as { retriable?: boolean }).retriable === false) reject(payload.error);
      });
    });
    joined.catch(() => undefined); // awaited below; a refusal may come before that
    await consumer.connect();
    await consumer.subscribe({ topics: options.topics.map((t) => this.onBroker(t)), fromBeginning: true });
    const rawOf = (topic: string, partition: number, message: KafkaMessage): RawMessage => ({
      topic: this.fromBroker(topic),
      partition,
      offset: message.offset,
      key: message.key?.toString() ?? '',
      value: message.value?.toString() ?? '',
      headers: headersOf(message.headers),
    });
    const offsets = new OffsetsCommittedByTime(controller.signal);
    const run: ConsumerRunConfig = {
      partitionsConsumedConcurrently: 3,
      // Offsets are committed by time (offsets.afterBatch), not after every batch as kafkajs does.
      autoCommit: false,
      autoCommitInterval: COMMIT_INTERVAL_MS,
      eachBatchAutoResolve: false,
      // An offset is resolved (and then committed) only once its message is handled or parked.
      // A batch taken from this member by a rebalance stops: the rest goes to the new owner.
      eachBatch: async (payload) => {
        const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
        const active = () => isRunning() && !isStale();
        const raws = batch.messages.map((message) => rawOf(batch.topic, batch.partition, message));
        const done = (raw: RawMessage) => resolveOffset(raw.offset);
        try {
          for (let i = 0; i < raws.length; i += context.batch ? MAX_BATCH : 1) {
            if (!active()) return;
            if (context.batch) await deliverBatch(raws.slice(i, i + MAX_BATCH), context, done, active);
            else await deliver(raws[i]!, context).then(() => done(raws[i]!));
            await heartbeat();
          }
        } finally {
          await offsets.afterBatch(payload);
        }
      },
    };
    keepConsumerRunning(consumer, run, {
      signal: controller.signal,
      logger: this.options.logger ?? stderrLogger,
      groupId: options.groupId,
    });
    await consumer.run(run);
    const subscription: Subscription = {
      stop: async () => {
        controller.abort();
        this.subscriptions.delete(subscription);
        await offsets.stop();
        await consumer.disconnect();
      },
    };
    this.subscriptions.add(subscription);
    try {
      await joined;
    } catch (error) {
      await subscription.stop();
      throw error;
    }
    return subscription;
  }

  /** Creates topics (and their DLQs) up front, so the first consumers see every partition. */
  async ensureTopics(topics: string[]): Promise<void> {
    const missing = [...new Set(topics.map((t) => this.onBroker(t)))].filter((t) => !this.knownTopics.has(t));
    if (missing.length === 0) return;
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const toCreate = missing.filter((topic) => !existing.has(topic));
      if (toCreate.length > 0) {
        await admin
          .createTopics({
            waitForLeaders: true,
            topics: toCreate.map((topic) => ({
              topic,
              numPartitions: this.options.partitions ?? 3,
              replicationFactor: 1,
            })),
          })
          .catch((error) => {
            if (!isMetadataNotYetPropagated(error)) throw error;
          });
        await waitForLeaders(admin, toCreate);
      }
      for (const topic of missing) this.knownTopics.add(topic);
    } finally {
      await admin.disconnect();
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()));
    const producer = this.producer;
    this.producer = undefined;
    await producer?.then(
      (p) => p.disconnect(),
      () => undefined,
    );
  }

  private async send(topic: string, messages: Array<{ key: string; value: string; headers?: Record<string, string> }>) {
    await this.ensureTopics([topic, dlqTopicOf(topic)]);
    const producer = await this.connectedProducer();
    await producer.send({ topic: this.onBroker(topic), acks: -1, messages });
  }

  /** One producer per bus: concurrent first sends share its connection instead of racing to make two. */
  private connectedProducer(): Promise<Producer> {
    if (this.producer) return this.producer;
    const connecting = (async () => {
      const producer = this.kafka.producer({
        createPartitioner: Partitioners.DefaultPartitioner,
        idempotent: true,
        maxInFlightRequests: 1,
      });
      await producer.connect();
      return producer;
    })();
    this.producer = connecting;
    // A failed connection is not kept: the next send tries again.
    connecting.catch(() => {
      if (this.producer === connecting) this.producer = undefined;
    });
    return connecting;
  }
}

/** kafkajs's own wait for leaders gives up on this code, which a busy broker answers while a new topic's metadata spreads. */
function isMetadataNotYetPropagated(error: unknown): boolean {
  const type = (error as { type?: string } | null)?.type;
  return type === 'UNKNOWN_TOPIC_OR_PARTITION' || type === 'LEADER_NOT_AVAILABLE';
}

/** Polls metadata until every partition of `topics` has a leader (at most 30 s), so the first send or subscribe finds them. */
async function waitForLeaders(admin: ReturnType<Kafka['admin']>, topics: string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await admin.fetchTopicMetadata({ topics }).then(
      ({ topics: found }) =>
        found.length === topics.length &&
        found.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0)),
      (error) => {
        if (isMetadataNotYetPropagated(error)) return false;
        throw error;
      },
    );
    if (ready) return;
    if (Date.now() > deadline) throw new Error(`kafka: topics ${topics.join(', ')} have no leader after 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
