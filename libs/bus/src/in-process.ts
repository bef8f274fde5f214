import type { DomainEventEnvelope } from '@billing/contracts';
import { EventEmitter } from 'node:events';
import { type DeliveryContext, type RawMessage, StoppedError, deliver, retryPolicy, stoppableSleep } from './delivery';
import { partitionOf } from './partition';
import { type Bus, type OutgoingMessage, type SubscribeOptions, type Subscription, dlqTopicOf } from './types';

interface Member {
  context: DeliveryContext;
  controller: AbortController;
}

/** One consumer group: its committed offsets and the workers that walk its partitions. */
class Group {
  readonly members: Member[] = [];
  readonly offsets = new Map<string, number>();
  readonly running = new Set<string>();
  constructor(readonly id: string) {}
}

/**
 * The Bus in one process, for the embedded default: topics are arrays split into partitions by
 * key, groups commit an offset per partition after the handler succeeds, and partition p goes
 * to member p mod n, so one key is handled in order by one member at a time.
 */
export class InProcessBus implements Bus {
  private readonly topics = new Map<string, RawMessage[][]>();
  private readonly groups = new Map<string, Group>();
  private readonly published = new EventEmitter();
  private closed = false;

  constructor(private readonly partitions = 3) {
    this.published.setMaxListeners(0);
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    for (const m of messages) this.append(topic, m.key, JSON.stringify(m.value), m.headers ?? {});
  }

  async publishRaw(topic: string, key: string, value: string): Promise<void> {
    this.append(topic, key, value, {});
  }

  async subscribe<Value = DomainEventEnvelope>(requested: SubscribeOptions<Value>): Promise<Subscription> {
    // Values reach the handler as `readValue` reads them (domain events without it).
    const options = requested as unknown as SubscribeOptions;
    const group = this.groups.get(options.groupId) ?? new Group(options.groupId);
    this.groups.set(options.groupId, group);
    const controller = new AbortController();
    const member: Member = {
      controller,
      context: {
        groupId: options.groupId,
        handler: options.handler,
        readValue: options.readValue,
        retry: retryPolicy(options.retry),
        sleep: stoppableSleep(controller.signal),
        park: async (raw, headers) => this.append(dlqTopicOf(raw.topic), raw.key, raw.value, headers),
      },
    };
    group.members.push(member);
    const onPublish = (topic: string) => {
      if (options.topics.includes(topic)) this.drain(group, topic);
    };
    this.published.on('message', onPublish);
    for (const topic of options.topics) this.drain(group, topic);
    return {
      stop: async () => {
        this.published.off('message', onPublish);
        controller.abort();
        group.members.splice(group.members.indexOf(member), 1);
        for (const topic of options.topics) this.drain(group, topic);
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const group of this.groups.values()) for (const member of group.members) member.controller.abort();
  }

  /** Messages of a topic, for tests and tools. */
  messages(topic: string): RawMessage[] {
    return (this.topics.get(topic) ?? []).flat();
  }

  private append(topic: string, key: string, value: string, headers: Record<string, string>): void {
    if (this.closed) throw new Error('bus is closed');
    const partitions = this.partitionsOf(topic);
    const partition = partitionOf(key, this.partitions);
    const log = partitions[partition]!;
    log.push({ topic, partition, offset: String(log.length), key, value, headers });
    this.published.emit('message', topic);
  }

  private partitionsOf(topic: string): RawMessage[][] {
    let partitions = this.topics.get(topic);
    if (!partitions) {
      partitions = Array.from({ length: this.partitions }, () => []);
      this.topics.set(topic, partitions);
    }
    return partitions;
  }

  private drain(group: Group, topic: string): void {
    for (let partition = 0; partition < this.partitions; partition++) {
      const slot = `${topic}/${partition}`;
      if (group.running.has(slot)) continue;
      group.running.add(slot);
      void this.walk(group, topic, partition, slot).catch(() => group.running.delete(slot));
    }
  }

  /** Delivers a partition's uncommitted messages one at a time to the member that owns it. */
  private async walk(group: Group, topic: string, partition: number, slot: string): Promise<void> {
    for (;;) {
      const offset = group.offsets.get(slot) ?? 0;
      const message = this.partitionsOf(topic)[partition]![offset];
      const owner = group.members[partition % Math.max(group.members.length, 1)];
      if (!message || !owner || this.closed) {
        // Released in the same tick as the last look, so a publish right after starts a new walk.
        group.running.delete(slot);
        return;
      }
      try {
        await deliver(message, owner.context);
        group.offsets.set(slot, offset + 1);
      } catch (error) {
        if (!(error instanceof StoppedError)) throw error;
        // The owner stopped mid-message: left uncommitted for the next owner.
      }
    }
  }
}
