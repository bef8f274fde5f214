import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import type { RawMessage } from '../src';

/**
 * Reads a whole topic from the beginning with a throwaway consumer group, until it holds
 * `expectedCount` messages (or, for 0, until a short quiet period proves it empty). Given a
 * `key`, only messages of that key are counted and returned: other keys on the topic may come
 * in an earlier fetch than the ones awaited.
 */
export async function readKafkaTopic(
  brokers: string[],
  topic: string,
  expectedCount: number,
  key?: string,
): Promise<RawMessage[]> {
  const kafka = new Kafka({ clientId: 'topic-reader', brokers, logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}` });
  const messages: RawMessage[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ topic: t, partition, message }) => {
        if (key !== undefined && message.key?.toString() !== key) return;
        messages.push({
          topic: t,
          partition,
          offset: message.offset,
          key: message.key?.toString() ?? '',
          value: message.value?.toString() ?? '',
          headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)])),
        });
      },
    });
    // A fresh consumer group joins and fetches in about a second on a quiet machine, but took
    // over 20 s in a loaded CI run: the wait ends as soon as the messages are in, so it may be long.
    const deadline = Date.now() + (expectedCount === 0 ? 4000 : 60000);
    while (Date.now() < deadline && (expectedCount === 0 || messages.length < expectedCount)) {
      await new Promise((r) => setTimeout(r, 100));
    }
    return messages.sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset));
  } finally {
    await consumer.disconnect();
  }
}
