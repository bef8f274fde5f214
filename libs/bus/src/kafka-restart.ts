import type { Consumer, ConsumerRunConfig } from 'kafkajs';

/** What `keepConsumerRunning` uses of a kafkajs consumer. */
export type RestartableConsumer = Pick<Consumer, 'on' | 'events' | 'connect' | 'run' | 'disconnect'>;

export interface KeepRunningOptions {
  /** Aborted when the subscription stops: nothing is restarted after that. */
  signal: AbortSignal;
  logger: { error: (details: object, message: string) => void };
  groupId: string;
  /** The pause before the nth restart in a row (from 0); by default 1 s doubling up to 30 s. */
  delayMs?: (restartsInARow: number) => number;
}

const defaultDelayMs = (restartsInARow: number) => Math.min(30_000, 1000 * 2 ** Math.min(restartsInARow, 5));

/**
 * kafkajs restarts a crashed consumer only after an error it deems retriable; after another
 * (under load, a broker back from a restart answered "Failed to find group coordinator" as
 * KafkaJSNonRetriableError) the consumer stays disconnected for good, and the service reads no
 * more events. Once the group has been joined, such a crash is followed by a start of our own:
 * connect and run again after a pause, with longer pauses while the starts keep failing. A
 * crash before the first join is left to the caller (a refusal no retry can mend fails the start).
 */
export function keepConsumerRunning(
  consumer: RestartableConsumer,
  run: ConsumerRunConfig,
  options: KeepRunningOptions,
) {
  const delayMs = options.delayMs ?? defaultDelayMs;
  let joined = false;
  let restartsInARow = 0;
  let timer: NodeJS.Timeout | undefined;
  const stop = () => clearTimeout(timer);
  options.signal.addEventListener('abort', stop, { once: true });

  const restartLater = () => {
    if (options.signal.aborted) return;
    timer = setTimeout(async () => {
      if (options.signal.aborted) return;
      try {
        await consumer.connect();
        await consumer.run(run);
        // Stopped while it was starting: the stop's disconnect may have come first.
        if (options.signal.aborted) await consumer.disconnect();
      } catch (error) {
        options.logger.error(
          { component: 'kafkajs', groupId: options.groupId, error: String(error) },
          'the consumer could not start again; trying later',
        );
        restartLater();
      }
    }, delayMs(restartsInARow++));
  };

  consumer.on(consumer.events.GROUP_JOIN, () => {
    joined = true;
    restartsInARow = 0;
  });
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    if (payload.restart || !joined || options.signal.aborted) return;
    options.logger.error(
      { component: 'kafkajs', groupId: options.groupId, error: String(payload.error) },
      'the consumer stopped on an error kafkajs does not restart after; starting it again',
    );
    restartLater();
  });
}
