import { EventEmitter } from 'node:events';
import CircuitBreaker from 'opossum';

/**
 * Who a failed call is blamed on:
 * - `upstream`: the request never reached the upstream (connection refused, no route, DNS), so
 *   nothing in it can have caused the failure: it counts against the upstream, for every caller.
 * - `caller`: the upstream was reached and failed (a timeout, a reset, a 502/503/504). The request
 *   itself may have caused it, so it counts against the caller's own breaker, and against the
 *   upstream only while several callers fail at once (`minFailingCallers`).
 * - `none`: not a failure of the upstream (a client that went away, an answer the caller handles).
 */
export type FailureBlame = 'upstream' | 'caller' | 'none';

export interface IsolatedBreakerOptions {
  /** The upstream's name: the breakers' names and group. */
  name: string;
  /** Decides who a failure of the action is blamed on; see `FailureBlame`. */
  blame: (error: unknown) => FailureBlame;
  /** How long an open breaker waits before letting one trial call through (half-open). */
  resetTimeout: number;
  /** Open when more than this percentage of the calls in the rolling window failed... */
  errorThresholdPercentage: number;
  /** ...once at least this many calls were made in it. */
  volumeThreshold: number;
  /** The rolling window, in ms, and the number of buckets it is cut into. */
  rollingCountTimeout: number;
  rollingCountBuckets: number;
  /**
   * Failures blamed on callers count against the upstream only while at least this many
   * distinct callers, and at least half of the callers seen in the rolling window, have a
   * failure as their latest outcome. Default 3.
   */
  minFailingCallers?: number;
  /** Caller breakers kept; past it the least recently used one is dropped. Default 1000. */
  maxCallers?: number;
}

export const DEFAULT_MIN_FAILING_CALLERS = 3;
export const DEFAULT_MAX_CALLERS = 1000;

const REJECTIONS = new Set(['EOPENBREAKER', 'ESHUTDOWN', 'ESEMLOCKED']);
const codeOf = (error: unknown) => (error as { code?: unknown } | null | undefined)?.code;

/**
 * Circuit breakers that one caller cannot open for the others: an opossum breaker per caller
 * (a tenant, or a client address; the caller of `fire` decides), in front of one opossum breaker
 * for the whole upstream.
 *
 * A call goes through its caller's breaker, then the upstream's. The caller's breaker counts
 * every failure of its own calls, so a caller whose requests make the upstream fail (bad input,
 * or a tenant whose data the upstream chokes on) soon gets fast rejections, alone. The upstream's
 * breaker counts failures that no request can cause (`upstream` blame: the service is down;
 * `volumeThreshold` of them in a row open it at once, however busy the window was) and, while
 * several callers fail together, the others too (the service is up but failing for everyone,
 * e.g. timing out). When it is open every caller is rejected at once.
 *
 * Caller breakers share one bucket-rotation timer and are kept in a bounded LRU, so memory and
 * timers stay bounded whatever the number of callers.
 */
export class IsolatedBreaker<A extends unknown[], R> {
  /** The breaker of the whole upstream: open means every caller is rejected at once. */
  readonly upstream: CircuitBreaker<[string, ...A], R>;
  private readonly callers = new Map<string, CircuitBreaker<A, R>>();
  private readonly outcomes: CallerOutcomes;
  private readonly rotation = new EventEmitter();
  private readonly rotationTimer: NodeJS.Timeout;
  /** Errors that count against the upstream (decided when the call failed). */
  private readonly againstUpstream = new WeakSet<object>();
  private readonly minFailingCallers: number;
  private readonly maxCallers: number;
  /** Calls in a row that did not reach the upstream, whoever made them. */
  private unreachedInARow = 0;
  private stopped = false;

  constructor(
    action: (...args: A) => Promise<R>,
    private readonly options: IsolatedBreakerOptions,
  ) {
    this.minFailingCallers = options.minFailingCallers ?? DEFAULT_MIN_FAILING_CALLERS;
    this.maxCallers = options.maxCallers ?? DEFAULT_MAX_CALLERS;
    this.outcomes = new CallerOutcomes(options.rollingCountTimeout, Math.max(this.maxCallers, 1) * 10);
    this.rotation.setMaxListeners(0);
    this.rotationTimer = setInterval(
      () => this.rotation.emit('rotate'),
      Math.max(1, Math.floor(options.rollingCountTimeout / options.rollingCountBuckets)),
    );
    this.rotationTimer.unref();

    const attempt = async (caller: string, ...args: A): Promise<R> => {
      try {
        const result = await action(...args);
        this.unreachedInARow = 0;
        this.outcomes.record(caller, false);
        return result;
      } catch (thrown) {
        const error = thrown !== null && typeof thrown === 'object' ? thrown : new Error(String(thrown));
        const blame = options.blame(error);
        this.outcomes.record(caller, blame !== 'none');
        if (blame === 'upstream' || (blame === 'caller' && this.severalCallersFailing())) {
          this.againstUpstream.add(error);
        }
        this.unreachedInARow = blame === 'upstream' ? this.unreachedInARow + 1 : 0;
        // The window may be full of successes from before: calls that cannot reach the upstream,
        // one after the other, mean it is down now.
        if (this.unreachedInARow >= Math.max(1, options.volumeThreshold) && this.upstream.closed) this.upstream.open();
        throw error;
      }
    };
    this.upstream = new CircuitBreaker<[string, ...A], R>(attempt, {
      ...this.tuning(),
      name: options.name,
      group: options.name,
      // Nothing reads its latency percentiles or snapshots: not recorded on every call.
      enableSnapshots: false,
      rollingPercentilesEnabled: false,
      // Not counted: the other callers' breakers already did, and the upstream is fine.
      errorFilter: (error: unknown) =>
        !(error !== null && typeof error === 'object' && this.againstUpstream.has(error)),
    });
  }

  /** Calls the action for `caller`, through the caller's breaker and the upstream's. */
  fire(caller: string, ...args: A): Promise<R> {
    if (this.stopped) return this.upstream.fire(caller, ...args);
    return this.breakerOf(caller).fire(...args);
  }

  /** The breaker of one caller, if it has one (for tests and metrics). */
  callerBreaker(caller: string): CircuitBreaker<A, R> | undefined {
    return this.callers.get(caller);
  }

  /** Callers whose latest call in the rolling window failed. */
  get failingCallers(): number {
    return this.outcomes.failing(Date.now());
  }

  shutdown(): void {
    this.stopped = true;
    clearInterval(this.rotationTimer);
    for (const breaker of this.callers.values()) breaker.shutdown();
    this.callers.clear();
    this.upstream.shutdown();
  }

  /** The breaker of one caller, made on first use. */
  private breakerOf(caller: string): CircuitBreaker<A, R> {
    const known = this.callers.get(caller);
    if (known) {
      // Most recently used last: the LRU drops from the front.
      this.callers.delete(caller);
      this.callers.set(caller, known);
      return known;
    }
    const breaker = new CircuitBreaker<A, R>((...args: A) => this.upstream.fire(caller, ...args), {
      ...this.tuning(),
      name: `${this.options.name}:${caller}`,
      group: this.options.name,
      rotateBucketController: this.rotation,
      enableSnapshots: false,
      rollingPercentilesEnabled: false,
      // The upstream's breaker being open, or a failure the caller did not cause, is not held against it.
      errorFilter: (error: unknown) => REJECTIONS.has(codeOf(error) as string) || this.options.blame(error) === 'none',
    });
    this.callers.set(caller, breaker);
    while (this.callers.size > this.maxCallers) {
      const [oldest, dropped] = this.callers.entries().next().value!;
      this.callers.delete(oldest);
      dropped.shutdown();
    }
    return breaker;
  }

  private severalCallersFailing(): boolean {
    const now = Date.now();
    const failing = this.outcomes.failing(now);
    return failing >= this.minFailingCallers && failing * 2 >= this.outcomes.active(now);
  }

  private tuning() {
    const { resetTimeout, errorThresholdPercentage, volumeThreshold, rollingCountTimeout, rollingCountBuckets } =
      this.options;
    return {
      // Callers enforce their own timeouts (and abort the request); opossum's would not abort it.
      timeout: false as const,
      resetTimeout,
      errorThresholdPercentage,
      volumeThreshold,
      rollingCountTimeout,
      rollingCountBuckets,
    };
  }
}

/**
 * The latest outcome of each caller within a window, in a Map kept in time order (an update
 * moves the caller to the end), so expired callers are dropped from the front in amortised
 * constant time and the counts are kept as they change.
 */
class CallerOutcomes {
  private readonly latest = new Map<string, { at: number; failed: boolean }>();
  private failed = 0;

  constructor(
    private readonly windowMs: number,
    private readonly maxEntries: number,
  ) {}

  record(caller: string, failed: boolean, now = Date.now()): void {
    this.forget(caller);
    this.latest.set(caller, { at: now, failed });
    if (failed) this.failed++;
    this.prune(now);
  }

  failing(now: number): number {
    this.prune(now);
    return this.failed;
  }

  active(now: number): number {
    this.prune(now);
    return this.latest.size;
  }

  private forget(caller: string): void {
    const previous = this.latest.get(caller);
    if (!previous) return;
    this.latest.delete(caller);
    if (previous.failed) this.failed--;
  }

  private prune(now: number): void {
    for (const [caller, outcome] of this.latest) {
      if (outcome.at > now - this.windowMs && this.latest.size <= this.maxEntries) break;
      this.forget(caller);
    }
  }
}
