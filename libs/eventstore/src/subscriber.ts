import type { EventStore } from './event-store';
import { type RecordedEvent, positionOf } from './types';

export interface SubscriberOptions {
  /** Name of the stored checkpoint; one per subscriber. */
  name: string;
  /** Handles one batch, in log order. Throwing leaves the checkpoint where it was. */
  handle: (events: RecordedEvent[]) => Promise<void>;
  batchSize?: number;
  /** Poll interval when nothing wakes it (appends from other processes). */
  pollIntervalMs?: number;
  /** Wait after a failed batch before it is tried again. */
  retryDelayMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * Follows a service's event log from a stored checkpoint. The checkpoint is saved after a
 * batch is handled, so a crash in between repeats the batch: at-least-once, never a gap.
 */
export class EventLogSubscriber {
  private running = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly options: SubscriberOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.store.onAppended(() => this.wake?.());
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.wake?.();
    await this.loop;
  }

  /** Handles every event visible now; returns how many. For tests and one-shot jobs. */
  async catchUp(): Promise<number> {
    let handled = 0;
    for (;;) {
      const count = await this.handleNextBatch();
      if (count === 0) return handled;
      handled += count;
    }
  }

  private async run(): Promise<void> {
    while (this.running) {
      let pause = this.options.pollIntervalMs ?? 100;
      try {
        if ((await this.handleNextBatch()) > 0) continue;
      } catch (error) {
        this.options.onError?.(error);
        pause = this.options.retryDelayMs ?? 1000;
      }
      await this.sleep(pause);
    }
  }

  private async handleNextBatch(): Promise<number> {
    const events = await this.store.readAfterCheckpoint(this.options.name, this.options.batchSize ?? 500);
    if (events.length === 0) return 0;
    await this.options.handle(events);
    await this.store.saveCheckpoint(this.options.name, positionOf(events[events.length - 1]!));
    return events.length;
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}
