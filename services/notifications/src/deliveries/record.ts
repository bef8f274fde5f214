import { type StreamAppend, handleCommand } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Claimed } from './claim';
import { type DeliveryCommand, type RecordAttempt, deliveryAggregate } from './decide';
import { deliveryStream } from './delivery';
import { projectDeliveries } from './read-model';

type Delivery = Pick<Claimed, 'id' | 'organization' | 'environment'>;

/** Runs one command on one delivery's stream, with the command's retries. */
export function runDeliveryCommand(context: ServiceContext, delivery: Delivery, command: DeliveryCommand) {
  const { store, now } = context;
  return handleCommand(store, deliveryStream(delivery.id), deliveryAggregate, command, {
    organization: delivery.organization,
    environment: delivery.environment,
    occurredAt: now(),
    project: (tx, events) => projectDeliveries(tx, store.tables.schema, events),
  });
}

/** Attempts recorded at most in one transaction. */
const BATCH = 200;

/**
 * Records attempts together with those that finished meanwhile: one read of their streams, one
 * transaction with one append and one projection for all. Should that fail (a concurrent replay
 * or cancel moved a stream), each is recorded on its own, with the command's retries.
 */
export function createAttemptRecorder(context: ServiceContext) {
  const { store, now } = context;
  const queued: Array<{ delivery: Delivery; command: RecordAttempt; done: (error?: unknown) => void }> = [];
  let recording = false;

  function record(delivery: Delivery, command: RecordAttempt): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      queued.push({ delivery, command, done: (error) => (error === undefined ? resolve() : reject(error)) });
      if (!recording) void recordQueued();
    });
  }

  async function recordQueued(): Promise<void> {
    recording = true;
    try {
      while (queued.length > 0) {
        const batch = queued.splice(0, BATCH);
        try {
          await recordTogether(batch);
          for (const entry of batch) entry.done();
        } catch {
          for (const entry of batch) {
            await runDeliveryCommand(context, entry.delivery, entry.command).then(
              () => entry.done(),
              (error) => entry.done(error ?? new Error('not recorded')),
            );
          }
        }
      }
    } finally {
      recording = false;
    }
  }

  async function recordTogether(entries: Array<{ delivery: Delivery; command: RecordAttempt }>): Promise<void> {
    const streams = entries.map((entry) => deliveryStream(entry.delivery.id));
    const recorded = await store.readStreams(streams);
    const occurredAt = now();
    const appends: StreamAppend[] = [];
    entries.forEach(({ delivery, command }, index) => {
      const history = recorded.get(streams[index]!) ?? [];
      const state = history.reduce(deliveryAggregate.evolve, deliveryAggregate.initialState());
      const events = deliveryAggregate.decide(command, state);
      if (events.length === 0) return; // a stale claim: recorded already
      appends.push({
        stream: streams[index]!,
        events,
        options: {
          expectedVersion: history.at(-1)?.stream_version ?? 0,
          organization: delivery.organization,
          environment: delivery.environment,
          occurredAt,
        },
      });
    });
    if (appends.length === 0) return;
    await store.transaction(async (tx) => {
      const results = await tx.appendMany(appends);
      await projectDeliveries(
        tx,
        store.tables.schema,
        results.flatMap((result) => result.events),
      );
    });
  }

  return { record };
}
