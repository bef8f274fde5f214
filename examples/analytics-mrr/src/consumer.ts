import { Kafka, logLevel } from 'kafkajs';
import type { EventContract } from './contract';
import { MrrLedger, type PublicEvent } from './mrr';

/** The public topics this consumer reads (docs/topics.md). */
export const MRR_TOPICS = ['checkout.events', 'billing.events'];

export interface AnalyticsConsumerOptions {
  brokers: string[];
  groupId: string;
  contract: EventContract;
  /** Put before the topic names, for a deployment that prefixes its topics (KAFKA_TOPIC_PREFIX). */
  topicPrefix?: string;
  /** Only this organization's events (one merchant's analytics). */
  organization?: string;
}

export interface Rejected {
  topic: string;
  offset: string;
  type: string;
  errors: string[];
}

export interface AnalyticsConsumer {
  ledger: MrrLedger;
  /** How many messages of each type passed their schema. */
  validated: Map<string, number>;
  /** Messages of a known type that failed their schema: reported and skipped, never folded. */
  rejected: Rejected[];
  stop(): Promise<void>;
}

/**
 * Reads the public topics from the beginning, validates each message against its JSON Schema
 * from the AsyncAPI document and folds the valid ones into MRR and churn. Types the document
 * does not list for the topic (newer than this consumer) are skipped.
 */
export async function startAnalyticsConsumer(options: AnalyticsConsumerOptions): Promise<AnalyticsConsumer> {
  const prefix = options.topicPrefix ?? '';
  const kafka = new Kafka({ clientId: 'analytics-mrr', brokers: options.brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: options.groupId });
  const ledger = new MrrLedger();
  const validated = new Map<string, number>();
  const rejected: Rejected[] = [];

  await consumer.connect();
  await consumer.subscribe({ topics: MRR_TOPICS.map((topic) => `${prefix}${topic}`), fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ topic: brokerTopic, message }) => {
      const topic = brokerTopic.slice(prefix.length);
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
      const value = JSON.parse(message.value?.toString() ?? 'null') as PublicEvent;
      if (options.organization && value?.organization !== options.organization) return;
      const result = options.contract.validate(topic, headers, value);
      if (!result.known) return;
      if (!result.valid) {
        rejected.push({ topic, offset: message.offset, type: result.type, errors: result.errors });
        return;
      }
      validated.set(result.type, (validated.get(result.type) ?? 0) + 1);
      ledger.apply(value);
    },
  });
  return { ledger, validated, rejected, stop: () => consumer.disconnect() };
}
