import type { EventStore } from './event-store';
import { type LogPosition, type RecordedEvent, positionOf } from './types';

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
  /**
   * While batches keep coming, the checkpoint is saved at most this often (default 0: after
   * every batch); in between the subscriber follows the log from where it is in memory. A quiet
   * log (a read that finds nothing) and a stop save it at once. A crash repeats what was handled
   * since the last save, as it repeats a batch without this: handlers already take repeats.
   */
  checkpointIntervalMs?: number;
  /**
   * How long an append in this process waits before it wakes the subscriber (default 0: at
   * once), so that the appends of concurrent commands are read and handled as one batch.
   */
  lingerMs?: number;
  /**
   * While appends keep coming, a read that an append wakes begins at least this long after the
   * read before it began (default 0). A busy log is then read in fewer, larger batches, each
   * handled and passed on once, where a read every `lingerMs` would cost its round trips for a
   * few events; an append after a quiet spell still waits only `lingerMs`.
   */
  readIntervalMs?: number;
  onError?: (error: unknown) => void;
}

/**
 * Follows a service's event log from a stored checkpoint. The checkpoint is saved after a
 * batch is handled, so a crash in between repeats the batch: at-least-once, never a gap.
 * Each start begins at the stored checkpoint: another process may have moved it meanwhile.
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
  /** Set while an append's wake waits out `lingerMs` (or the rest of `readIntervalMs`). */
  private lingering: NodeJS.Timeout | undefined;
  /** When the last read of the log began (`Date.now()`). */
  private lastReadAt = 0;
  /** How far the log is handled, once this subscriber has handled something since it started. */
  private handledTo: LogPosition | undefined;
  /** When `handledTo` first moved past the stored checkpoint; undefined: nothing left to save. */
  private unsavedSince: number | undefined;

  constructor(
    private readonly store: EventStore,
    private readonly options: SubscriberOptions,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.handledTo = undefined;
    this.unsavedSince = undefined;
    this.unsubscribe = this.store.onAppended(() => {
      this.appendedSinceRead = true;
      this.wakeAfterLinger();
    });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    clearTimeout(this.lingering);
    this.lingering = undefined;
    this.wake?.();
    await this.loop;
    // Unsaved, the next start repeats what was handled since the last save.
    await this.saveCheckpoint().catch((error: unknown) => this.options.onError?.(error));
  }

  /** Handles every event visible now; returns how many. For tests and one-shot jobs. */
  async catchUp(): Promise<number> {
    let handled = 0;
    for (;;) {
      const count = await this.handleNextBatch();
      if (count === 0) return handled; // the read that found nothing saved the checkpoint
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
        if (handled === this.batchSize) continue;
        if (this.appendedSinceRead) {
          pause = this.pauseBeforeAppended();
          if (pause <= 0) continue;
        } else {
          pause = this.pauseAfter(handled);
        }
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

  /** How long an announced append waits before it is read: the linger, or what is left of the read interval. */
  private pauseBeforeAppended(): number {
    const sinceRead = Date.now() - this.lastReadAt;
    return Math.max(this.options.lingerMs ?? 0, (this.options.readIntervalMs ?? 0) - sinceRead);
  }

  private async handleNextBatch(): Promise<number> {
    this.appendedSinceRead = false;
    this.lastReadAt = Date.now();
    const events = this.handledTo
      ? await this.store.readAll(this.handledTo, this.batchSize)
      : await this.store.readAfterCheckpoint(this.options.name, this.batchSize);
    if (events.length === 0) {
      await this.saveCheckpoint();
      return 0;
    }
    await this.options.handle(events);
    this.handledTo = positionOf(events[events.length - 1]!);
    this.unsavedSince ??= Date.now();
    if (Date.now() - this.unsavedSince >= (this.options.checkpointIntervalMs ?? 0)) await this.saveCheckpoint();
    return events.length;
  }

  /** Saves how far the log is handled, if that moved since the last save. */
  private async saveCheckpoint(): Promise<void> {
    if (this.unsavedSince === undefined || !this.handledTo) return;
    await this.store.saveCheckpoint(this.options.name, this.handledTo);
    this.unsavedSince = undefined;
  }

  private wakeAfterLinger(): void {
    const pause = this.pauseBeforeAppended();
    if (pause <= 0) return void this.wake?.();
    this.lingering ??= setTimeout(() => {
      this.lingering = undefined;
      this.wake?.();
    }, pause);
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
