import { ApiError } from '@billing/contracts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';

export interface AdmissionSettings {
  /** Responses slower than this (ms, admission to the last byte) mean the gateway admits too many. */
  targetLatencyMs: number;
  /** The bound never goes below this, nor above `maxInFlight`, where it starts. */
  minInFlight: number;
  maxInFlight: number;
}

/** Requests that finish work already started (paying an open session) may go this far past the bound. */
export const FINISHING_HEADROOM = 1.5;

/**
 * Past the machine's capacity, every request admitted only waits longer: with no bound, at
 * twice the rate one process could serve, requests queued until they passed the services'
 * timeouts, the breakers opened and every request was refused (issue 17). The bound adapts to
 * the machine (and to whatever else runs on it): a target, not a guessed concurrency. The floor
 * is not low: much of a request's time is spent waiting on PostgreSQL and Kafka, so on a busy
 * machine a bound of 12 kept the process 70 % idle and served half what 32 served.
 */
export const DEFAULT_ADMISSION: AdmissionSettings = { targetLatencyMs: 1000, minInFlight: 32, maxInFlight: 256 };

/** Seconds a refused client is told to wait before trying again. */
export const AT_CAPACITY_RETRY_AFTER_S = 1;

/**
 * How many requests may be in flight at once, adapted as TCP adapts its window (AIMD): a
 * response slower than the target cuts the bound by a quarter, at most once per target
 * interval (the responses already queued are slow for the same cause); every response within
 * the target while the bound is in use adds 1/bound, so about one a round of requests.
 */
export class AdaptiveInFlightLimit {
  private bound: number;
  private inFlight = 0;
  private lastCut = -Infinity;

  constructor(private readonly settings: AdmissionSettings) {
    // From the top: the bound is for overload, which slow responses show. Started at twice the
    // minimum (64), it refused requests at half load when a pause of 150 ms held 64 in flight.
    this.bound = settings.maxInFlight;
  }

  get limit(): number {
    return Math.floor(this.bound);
  }

  /**
   * Takes a place if one is free. Work that finishes what an admitted request started has
   * headroom past the bound: refusing a payment loses the session its creation cost.
   */
  admit(finishing = false): boolean {
    if (this.inFlight >= (finishing ? Math.floor(this.bound * FINISHING_HEADROOM) : this.limit)) return false;
    this.inFlight++;
    return true;
  }

  /** Gives the place back, with how long the request took. */
  release(latencyMs: number, now: number): void {
    const { targetLatencyMs, minInFlight, maxInFlight } = this.settings;
    const used = this.inFlight >= this.limit / 2;
    this.inFlight--;
    if (latencyMs > targetLatencyMs) {
      if (now - this.lastCut < targetLatencyMs) return;
      this.lastCut = now;
      this.bound = Math.max(minInFlight, this.bound * 0.75);
    } else if (used) {
      this.bound = Math.min(maxInFlight, this.bound + 1 / this.bound);
    }
  }
}

/**
 * Admits requests within the adaptive bound; the others are refused with `503
 * service_unavailable` and `Retry-After`, at once, without reaching a service (so no breaker
 * counts them). A request leaves when its response is finished or its client went away. Works
 * on node's own request and response, so that express and a lane (`Lane`) share one bound.
 */
export function inFlightAdmission<Req extends IncomingMessage>(
  settings: AdmissionSettings,
  options: {
    /** Whether the request finishes work already started (see `AdaptiveInFlightLimit.admit`). */
    finishing: (req: Req) => boolean;
    onRefused?: (limit: number) => void;
    now?: () => number;
  },
): (req: Req, res: ServerResponse) => ApiError | undefined {
  const limit = new AdaptiveInFlightLimit(settings);
  const { finishing, onRefused, now = performance.now.bind(performance) } = options;
  return (req, res) => {
    if (!limit.admit(finishing(req))) {
      onRefused?.(limit.limit);
      res.setHeader('Retry-After', String(AT_CAPACITY_RETRY_AFTER_S));
      return new ApiError(503, 'service_unavailable', 'The platform is at capacity; retry in a moment');
    }
    const admitted = now();
    res.once('close', () => {
      const left = now();
      limit.release(left - admitted, left);
    });
    return undefined;
  };
}

/** `inFlightAdmission` as express middleware: a refusal goes on as an error. */
export const admissionMiddleware =
  (admit: (req: Request, res: ServerResponse) => ApiError | undefined): RequestHandler =>
  (req, res, next) =>
    next(admit(req, res));
