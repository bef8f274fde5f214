import type { StreamAppend } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { deliveryAggregate } from './aggregate';
import type { Claimed } from './claim';
import type { RecordAttempt } from './decide';
import { projectDeliveries } from './read-model';

type Delivery = Pick<Claimed, 'id' | 'organization' | 'environment'>;

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
          for (const { delivery, command, done } of batch) {
            const { organization, environment } = delivery;
            await deliveryAggregate
              .handle(store, delivery.id, command, { organization, environment, occurredAt: now() })
              .then(
                () => done(),
                (error) => done(error ?? new Error('not recorded')),
              );
          }
        }
      }
    } finally {
      recording = false;
    }
  }

  async function recordTogether(entries: Array<{ delivery: Delivery; command: RecordAttempt }>): Promise<void> {
    const streams = entries.map((entry) => deliveryAggregate.stream(entry.delivery.id));
    const recorded = await store.readStreams(streams);
    const occurredAt = now();
    const appends: StreamAppend[] = [];
    entries.forEach(({ delivery, command }, index) => {
      const history = recorded.get(streams[index]!) ?? [];
      const state = deliveryAggregate.fold(history);
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
