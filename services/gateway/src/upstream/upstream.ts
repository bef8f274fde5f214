import http, { type ClientRequest, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { NextFunction, Request, Response } from 'express';
import { createProxyMiddleware, fixRequestBody, type Options } from 'http-proxy-middleware';
import type CircuitBreaker from 'opossum';
import { ApiError } from '@billing/contracts';
import { type FailureBlame, IsolatedBreaker } from '@billing/runtime';

/** A failure of the upstream itself: refused, reset, timed out, or a 502/503/504 answer. */
export class UpstreamError extends Error {
  constructor(
    readonly upstream: string,
    message: string,
    readonly code: 'ETIMEDOUT' | 'EUPSTREAMSTATUS' | (string & {}),
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'UpstreamError';
  }
}

/** Breaker tuning; defaults in DEFAULT_BREAKER_OPTIONS. */
export type UpstreamBreakerOptions = Pick<
  CircuitBreaker.Options,
  'errorThresholdPercentage' | 'volumeThreshold' | 'rollingCountTimeout' | 'rollingCountBuckets'
> & {
  /** Distinct failing callers from which their failures also count against the whole upstream. */
  minFailingCallers?: number;
  /** Caller breakers kept (least recently used dropped). */
  maxCallers?: number;
};

/**
 * A breaker opens when more than half of the calls in the last 10 s failed, once at least 5
 * calls were made (so one refused connection at startup does not cut a service off). Failures
 * that a request may have caused count against the whole upstream only while at least 3
 * callers (and half of those seen) are failing; see `createUpstream`.
 */
export const DEFAULT_BREAKER_OPTIONS: Required<UpstreamBreakerOptions> = {
  errorThresholdPercentage: 50,
  volumeThreshold: 5,
  rollingCountTimeout: 10_000,
  rollingCountBuckets: 10,
  minFailingCallers: 3,
  maxCallers: 1000,
};

/**
 * 502/503/504 from a service mean "cannot serve now": passed through, but counted as failures.
 * A 500 is not: it is a bug answering, usually for one request's input, and the service is up.
 */
export const defaultIsFailureStatus = (status: number): boolean => status === 502 || status === 503 || status === 504;

/** Errors of a connection that was never made: nothing of the request reached the upstream. */
const NOT_REACHED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

/**
 * Connection failures are the upstream's alone; a timeout, a reset or a failing status may
 * have been caused by the request, so they are blamed on its caller first.
 */
export function blameUpstreamFailure(error: unknown): FailureBlame {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && NOT_REACHED.has(code) ? 'upstream' : 'caller';
}

/** Without `callerOf`: the client's address. */
const clientAddress = (req: Request): string => `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;

export interface UpstreamOptions {
  /** Service name, used in the 503 message and as the breaker's name. */
  name: string;
  /** Base URL, e.g. `http://127.0.0.1:4101`. */
  target: string;
  /**
   * Longest wait for the upstream's response headers to a read (GET, HEAD, OPTIONS), and longest
   * silence on its socket while the body streams. Past it the upstream request is aborted and
   * the client gets 503. Default 1500 ms.
   */
  timeoutMs?: number;
  /**
   * The same for a write (POST, PUT, PATCH, DELETE), which may queue behind concurrent writers
   * of its record. Past it the client gets `504 gateway_timeout`: the write may still be applied.
   * Default 10 s (docs/decisions/0005).
   */
  writeTimeoutMs?: number;
  /**
   * A write that timed out: return a callback to keep the upstream request running for up to
   * `lateAnswerMs` more and receive its answer (or `undefined` when none came), e.g. to keep it
   * under the request's Idempotency-Key. Without one the upstream request is aborted.
   */
  awaitLateAnswer?: (req: Request, res: Response) => ((answer: LateAnswer | undefined) => void) | undefined;
  /** How long a timed-out write's answer is still awaited for `awaitLateAnswer`. Default 30 s. */
  lateAnswerMs?: number;
  /** How long the breaker stays open before letting one trial request through (half-open). */
  resetTimeoutMs?: number;
  /**
   * Rewrites the forwarded path. Without it the path is `req.url`, which express makes relative
   * to the mount point (`app.use('/v1/customers', upstream)` forwards `/v1/customers/cus_1` as
   * `/cus_1`); use `(_path, req) => req.originalUrl` to forward the full path.
   */
  pathRewrite?: Options<Request, Response>['pathRewrite'];
  /** Runs before the request leaves, e.g. to set identity headers. Must not write the body. */
  onProxyReq?: (proxyReq: ClientRequest, req: Request) => void;
  /** Every failure that ended in a 503 (or counted against the breaker); for logging. */
  onError?: (error: Error, req: Request, res: Response) => void;
  /** Upstream statuses that count as breaker failures (still passed through). */
  isFailureStatus?: (status: number) => boolean;
  /**
   * Who sends the request, for the per-caller breakers: a tenant, or a client address. Called
   * once per request; default `ip:<req.ip>`.
   */
  callerOf?: (req: Request, res: Response) => string;
  breaker?: UpstreamBreakerOptions;
}

/** An express handler to mount directly, with its breaker and `close()`. */
export type UpstreamHandler = ((req: Request, res: Response, next: NextFunction) => void) & {
  readonly upstreamName: string;
  readonly target: string;
  /**
   * The opossum breaker of the whole upstream (`opened`, `halfOpen`, `stats`, events): open, it
   * rejects every caller.
   */
  readonly breaker: CircuitBreaker<[string, Request, Response], void>;
  /** The breaker of one caller (as `callerOf` names it), once that caller was seen. */
  callerBreaker(caller: string): CircuitBreaker<[Request, Response], void> | undefined;
  /** Stops the breaker's timers, aborts requests in flight and closes pooled connections. */
  close(): Promise<void>;
};

/** The upstream's answer to a write that had already timed out at the gateway. */
export interface LateAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const isWrite = (method: string): boolean => !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());

/** One forwarding attempt, from `fire` until the upstream's response headers (or a failure). */
interface Attempt {
  settled: boolean;
  proxyReq?: ClientRequest;
  succeed(): void;
  /** `passedThrough`: the upstream's own answer is being relayed, so no 503 is written. */
  fail(error: Error, passedThrough?: boolean): void;
}

/**
 * Forwards requests to one internal service through http-proxy-middleware, behind opossum
 * circuit breakers that one caller cannot open for the others (`IsolatedBreaker`): a breaker per
 * caller (`callerOf`: a tenant, or a client address) in front of one for the whole upstream.
 *
 * - Upstream answers, including 4xx and 5xx, are relayed unchanged. 502/503/504 also count as
 *   breaker failures (`isFailureStatus`): they mean the service cannot serve right now. A 500
 *   does not count: the service answered, and a bug that one request's input triggers must not
 *   cut anyone off.
 * - Who is blamed: a connection refused (or unroutable) never reached the service, so it counts
 *   against the whole upstream: a service that is down opens the upstream's breaker after a few
 *   requests, for everyone. A timeout, reset or failing status may come from the request itself,
 *   so it counts against its caller's breaker, and against the upstream only while at least
 *   `minFailingCallers` callers, and half of those seen in the window, are failing.
 * - Refused or reset connections and timeouts answer `503 service_unavailable` within
 *   `timeoutMs`, and count as failures. On timeout the upstream request is destroyed, and a late
 *   upstream response is discarded: the attempt is settled once and the client gets one answer.
 * - A write gets `writeTimeoutMs` instead, and its timeout answers `504 gateway_timeout`, saying
 *   that the write may still be applied and how to learn its outcome. With `awaitLateAnswer`
 *   the upstream request is left to finish (up to `lateAnswerMs`) and its answer handed over.
 * - While the breaker is open, requests answer 503 at once without reaching the upstream; after
 *   `resetTimeoutMs` one trial request goes through and closes the breaker if it succeeds.
 * - A body already parsed by `express.json()` (or urlencoded/text) is re-serialised with
 *   `fixRequestBody`; otherwise the raw body is streamed.
 * - A client that goes away aborts the upstream request; that is not counted as a failure.
 * - If the upstream dies while its body is streaming, the client connection is destroyed rather
 *   than ending a truncated response that would look complete.
 */
export function createUpstream(options: UpstreamOptions): UpstreamHandler {
  const { name, target, onProxyReq, onError } = options;
  const timeoutMs = options.timeoutMs ?? 1500;
  const writeTimeoutMs = options.writeTimeoutMs ?? 10_000;
  const lateAnswerMs = options.lateAnswerMs ?? 30_000;
  /** Timed-out writes whose answer is still awaited, by client request. */
  const lateAnswers = new WeakMap<IncomingMessage, (answer: LateAnswer | undefined) => void>();
  const resetTimeoutMs = options.resetTimeoutMs ?? 1000;
  const isFailureStatus = options.isFailureStatus ?? defaultIsFailureStatus;

  const attempts = new WeakMap<IncomingMessage, Attempt>();
  /** Responses already answered (503 written or upstream answer relayed). */
  const answered = new WeakSet<Response>();
  const inFlight = new Set<ClientRequest>();
  const agent =
    new URL(target).protocol === 'https:' ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });

  const unavailable = ApiError.of('service_unavailable', `${name} is unavailable`);
  const respondUnavailable = (res: Response): void => {
    if (answered.has(res) || res.headersSent || res.writableEnded || res.destroyed) return;
    answered.add(res);
    res.status(unavailable.status).json(unavailable.toEnvelope());
  };
  const respondTimedOut = (res: Response, waited: number, awaited: boolean): void => {
    if (answered.has(res) || res.headersSent || res.writableEnded || res.destroyed) return;
    answered.add(res);
    const outcome = awaited
      ? 'Retry with the same Idempotency-Key (sent back in that header) to learn the outcome: the retry ' +
        'answers 409 conflict while the request still runs, then replays its answer.'
      : 'Read the resource to learn its state before sending the request again.';
    const timedOut = ApiError.of(
      'gateway_timeout',
      `${name} did not answer within ${waited} ms; the request may still be applied. ${outcome}`,
    );
    res.status(timedOut.status).json(timedOut.toEnvelope());
  };

  const proxy = createProxyMiddleware<Request, Response>({
    target,
    agent,
    xfwd: true,
    // No proxyTimeout: the socket idle limit is set per request in `proxyReq`, by method.
    pathRewrite: options.pathRewrite,
    on: {
      proxyReq: (proxyReq, req) => {
        const attempt = attempts.get(req);
        if (!attempt || attempt.settled) {
          // Timed out (or the client left) before the socket was even assigned.
          proxyReq.destroy();
          // Nothing reached the upstream: the write was not applied.
          lateAnswers.get(req)?.(undefined);
          return;
        }
        // Socket idle limit, also while the response body streams (http-proxy's proxyTimeout);
        // a write's covers the time its late answer is awaited.
        const idleMs = isWrite(req.method) ? writeTimeoutMs + lateAnswerMs : timeoutMs;
        proxyReq.setTimeout(idleMs, () => proxyReq.destroy());
        attempt.proxyReq = proxyReq;
        inFlight.add(proxyReq);
        proxyReq.once('close', () => inFlight.delete(proxyReq));
        try {
          // Headers first: fixRequestBody writes the body, which sends the headers.
          onProxyReq?.(proxyReq, req);
          fixRequestBody(proxyReq, req);
          writeRawBody(proxyReq, req);
        } catch (error) {
          attempt.fail(toError(error));
        }
      },
      proxyRes: (proxyRes, req, res) => {
        const attempt = attempts.get(req);
        if (!attempt || attempt.settled) {
          // A late answer after the 503 or 504 went out: http-proxy will not pipe it (the
          // response is finished). Read it for `awaitLateAnswer`, or drop the upstream socket.
          const late = lateAnswers.get(req);
          if (late && res.writableEnded) {
            readLateAnswer(proxyRes, late);
          } else {
            proxyRes.destroy();
            late?.(undefined);
          }
          return;
        }
        answered.add(res);
        proxyRes.once('close', () => {
          if (!proxyRes.complete && !res.writableEnded) res.destroy();
        });
        const status = proxyRes.statusCode ?? 502;
        if (isFailureStatus(status)) {
          attempt.fail(new UpstreamError(name, `${name} answered ${status}`, 'EUPSTREAMSTATUS'), true);
        } else {
          attempt.succeed();
        }
      },
      error: (error, req, res) => {
        const attempt = attempts.get(req);
        if (attempt && !attempt.settled) {
          attempt.fail(error);
          return;
        }
        // After the attempt settled: the 503 is already out, or the body was streaming.
        lateAnswers.get(req)?.(undefined);
        if (res instanceof http.ServerResponse && res.headersSent && !res.writableEnded) res.destroy();
      },
    },
  });

  const forward = (req: Request, res: Response): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const settle = (): boolean => {
        if (attempt.settled) return false;
        attempt.settled = true;
        clearTimeout(timer);
        res.off('close', onClientGone);
        return true;
      };
      const attempt: Attempt = {
        settled: false,
        succeed: () => {
          if (settle()) resolve();
        },
        fail: (error, passedThrough = false) => {
          if (!settle()) return;
          if (!passedThrough && write && error instanceof UpstreamError && error.code === 'ETIMEDOUT') {
            // The write may be applied yet: keep it running for whoever wants its answer.
            const late = awaitLate(req, res, attempt.proxyReq);
            if (!late) attempt.proxyReq?.destroy();
            respondTimedOut(res, limit, late);
          } else if (!passedThrough) {
            attempt.proxyReq?.destroy();
            // Answer now, synchronously, so nothing from the upstream can slip in first.
            respondUnavailable(res);
          }
          reject(error);
        },
      };
      const onClientGone = (): void => {
        // The client left before the upstream answered: abort it, and do not blame the upstream.
        attempt.proxyReq?.destroy();
        attempt.succeed();
      };
      const write = isWrite(req.method);
      const limit = write ? writeTimeoutMs : timeoutMs;
      const timer = setTimeout(
        () => attempt.fail(new UpstreamError(name, `${name} did not answer within ${limit} ms`, 'ETIMEDOUT')),
        limit,
      );
      attempts.set(req, attempt);
      res.once('close', onClientGone);
      void proxy(req, res, (error?: unknown) => {
        attempt.fail(toError(error ?? new Error('the proxy did not handle the request')));
      });
    });

  /**
   * Registers the late-answer callback of a timed-out write, called once: with the answer, or
   * with `undefined` when the upstream request fails or `lateAnswerMs` passes first.
   */
  const awaitLate = (req: Request, res: Response, proxyReq: ClientRequest | undefined): boolean => {
    const callback = options.awaitLateAnswer?.(req, res);
    if (!callback) return false;
    let done = false;
    const giveUp = setTimeout(() => {
      proxyReq?.destroy();
      finish(undefined);
    }, lateAnswerMs);
    giveUp.unref();
    const finish = (answer: LateAnswer | undefined) => {
      if (done) return;
      done = true;
      clearTimeout(giveUp);
      lateAnswers.delete(req);
      callback(answer);
    };
    lateAnswers.set(req, finish);
    let responded = false;
    proxyReq?.once('response', () => (responded = true));
    proxyReq?.once('close', () => {
      // Closed without a response (destroyed, reset): the outcome stays unknown.
      if (!responded) finish(undefined);
    });
    return true;
  };

  // The attempt enforces its own timeout, which also aborts the upstream request.
  const breakers = new IsolatedBreaker<[Request, Response], void>(forward, {
    name,
    blame: blameUpstreamFailure,
    resetTimeout: resetTimeoutMs,
    ...DEFAULT_BREAKER_OPTIONS,
    ...options.breaker,
  });
  const callerOf = options.callerOf ?? clientAddress;

  const handler = (req: Request, res: Response, _next: NextFunction): void => {
    // Node already answered `100 Continue` to the client; forwarded, the header would also stop
    // http-proxy from emitting `proxyReq`, which sets the identity headers.
    delete req.headers.expect;
    breakers.fire(callerOf(req, res), req, res).catch((error: unknown) => {
      // Attempt failures have answered already; this answers an open breaker, the caller's or the
      // upstream's (EOPENBREAKER), or a closed upstream (ESHUTDOWN).
      respondUnavailable(res);
      onError?.(toError(error), req, res);
    });
  };

  return Object.assign(handler, {
    upstreamName: name,
    target,
    breaker: breakers.upstream,
    callerBreaker: (caller: string) => breakers.callerBreaker(caller),
    close: async (): Promise<void> => {
      breakers.shutdown();
      for (const request of inFlight) request.destroy();
      agent.destroy();
    },
  });
}

/** Reads a whole late answer (bodies are small JSON) and hands it over, or `undefined` if it breaks off. */
function readLateAnswer(proxyRes: IncomingMessage, done: (answer: LateAnswer | undefined) => void) {
  const chunks: Buffer[] = [];
  proxyRes.on('data', (chunk: Buffer) => chunks.push(chunk));
  proxyRes.once('end', () => {
    const headers: Record<string, string> = {};
    for (const [header, value] of Object.entries(proxyRes.headers)) {
      if (value !== undefined) headers[header] = Array.isArray(value) ? value.join(', ') : value;
    }
    done({ status: proxyRes.statusCode ?? 502, headers, body: Buffer.concat(chunks).toString('utf8') });
  });
  proxyRes.once('close', () => {
    if (!proxyRes.complete) done(undefined);
  });
  proxyRes.once('error', () => done(undefined));
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** A body read ahead of the proxy (`rawBody`, by the idempotency check) is sent as it came. */
function writeRawBody(proxyReq: ClientRequest, req: Request & { rawBody?: Buffer }) {
  if (!Buffer.isBuffer(req.rawBody) || req.rawBody.length === 0) return;
  proxyReq.removeHeader('transfer-encoding');
  proxyReq.setHeader('content-length', req.rawBody.length);
  proxyReq.write(req.rawBody);
}
