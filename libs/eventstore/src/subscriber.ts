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
  /**
   * While polls keep finding nothing, each waits twice as long as the last, up to this (default:
   * `pollIntervalMs`, no backing off). An append in this process still wakes it at once.
   */
  idlePollIntervalMs?: number;
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
  /** An append was announced since the last read began: the log may hold more than it returned. */
  private appendedSinceRead = false;
  /** Polls in a row that found nothing. */
  private emptyPolls = 0;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly options: SubscriberOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.store.onAppended(() => {
      this.appendedSinceRead = true;
      this.wake?.();
    });
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
      let pause: number;
      try {
        // A short batch was all the log held when read, unless this process appended since:
        // reading again at once would cost a round trip per batch to find nothing. Appends of
        // other processes are found by the next poll, as when the log was idle.
        const handled = await this.handleNextBatch();
        if (handled === this.batchSize || this.appendedSinceRead) continue;
        pause = this.pauseAfter(handled);
      } catch (error) {
        this.options.onError?.(error);
        pause = this.options.retryDelayMs ?? 1000;
      }
      await this.sleep(pause);
    }
  }

  private pauseAfter(handled: number): number {
    const base = this.options.pollIntervalMs ?? 100;
    this.emptyPolls = handled > 0 ? 0 : Math.min(this.emptyPolls + 1, 20);
    return Math.min(base * 2 ** Math.max(this.emptyPolls - 1, 0), this.options.idlePollIntervalMs ?? base);
  }

  private get batchSize(): number {
    return this.options.batchSize ?? 500;
  }

  private async handleNextBatch(): Promise<number> {
    this.appendedSinceRead = false;
    const events = await this.store.readAfterCheckpoint(this.options.name, this.batchSize);
    if (events.length === 0) return 0;
    await this.options.handle(events);
    await this.store.saveCheckpoint(this.options.name, positionOf(events[events.length - 1]!));
    return events.length;
  }

  private sleep(ms: number): Promise<void> {
    // A stop that came during a read or a batch has no pause to cut short: none is begun.
    if (!this.running) return Promise.resolve();
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
