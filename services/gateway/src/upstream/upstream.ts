import http, { type ClientRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type CircuitBreaker from 'opossum';
import { ApiError } from '@billing/contracts';
import { type FailureBlame, IsolatedBreaker } from '@billing/runtime';
import { SERVICE_KEEP_ALIVE_TIMEOUT_MS } from '@billing/service';
import { sendRefusal } from '../refusals';
import { readRequestBody } from '../request-body';

/**
 * What the upstream reads of a request: node's own, with what express (or a lane, `Lane` of
 * `@billing/service`) adds: the target as it came, the client's address, a body read ahead.
 */
export type ForwardedRequest = IncomingMessage & {
  url: string;
  method: string;
  originalUrl?: string;
  ip?: string;
  rawBody?: unknown;
  body?: unknown;
  /** Express's link to the response, whose `locals` may say who the request acts for. */
  res?: { locals?: Record<string, unknown> };
};

/** Node's response with express's `locals` (the request id, the caller). */
export type ForwardedResponse = ServerResponse & { locals: Record<string, unknown> };

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

/**
 * How long a pooled upstream socket may sit idle before the gateway closes it: well within the
 * services' keep-alive timeout, so the gateway never sends a request on a socket that the
 * service is closing at that moment (which answered ECONNRESET, and the client 503).
 */
export const UPSTREAM_FREE_SOCKET_TIMEOUT_MS = SERVICE_KEEP_ALIVE_TIMEOUT_MS / 2;

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
const clientAddress = (req: ForwardedRequest): string => `ip:${req.ip ?? req.socket.remoteAddress ?? 'unknown'}`;

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
  awaitLateAnswer?: (
    req: ForwardedRequest,
    res: ForwardedResponse,
  ) => ((answer: LateAnswer | undefined) => void) | undefined;
  /** How long a timed-out write's answer is still awaited for `awaitLateAnswer`. Default 30 s. */
  lateAnswerMs?: number;
  /** How long the breaker stays open before letting one trial request through (half-open). */
  resetTimeoutMs?: number;
  /**
   * Rewrites the forwarded path. Without it the path is `req.url`, which express makes relative
   * to the mount point (`app.use('/v1/customers', upstream)` forwards `/v1/customers/cus_1` as
   * `/cus_1`); use `(_path, req) => req.originalUrl` to forward the full path.
   */
  pathRewrite?: (path: string, req: ForwardedRequest) => string;
  /**
   * Runs before the request leaves, e.g. to set identity headers, with the body as it will be
   * sent (to sign). Must not write the body.
   */
  onProxyReq?: (proxyReq: ClientRequest, req: ForwardedRequest, body: Buffer) => void;
  /** Every failure that ended in a 503 (or counted against the breaker); for logging. */
  onError?: (error: Error, req: ForwardedRequest, res: ForwardedResponse) => void;
  /** Upstream statuses that count as breaker failures (still passed through). */
  isFailureStatus?: (status: number) => boolean;
  /**
   * Who sends the request, for the per-caller breakers: a tenant, or a client address. Called
   * once per request; default `ip:<req.ip>`.
   */
  callerOf?: (req: ForwardedRequest, res: ForwardedResponse) => string;
  breaker?: UpstreamBreakerOptions;
}

/** An express handler to mount directly, with its breaker and `close()`. */
export type UpstreamHandler = ((req: ForwardedRequest, res: ForwardedResponse, next?: unknown) => void) & {
  readonly upstreamName: string;
  readonly target: string;
  /**
   * The opossum breaker of the whole upstream (`opened`, `halfOpen`, `stats`, events): open, it
   * rejects every caller.
   */
  readonly breaker: CircuitBreaker<[string, ForwardedRequest, ForwardedResponse], void>;
  /** The breaker of one caller (as `callerOf` names it), once that caller was seen. */
  callerBreaker(caller: string): CircuitBreaker<[ForwardedRequest, ForwardedResponse], void> | undefined;
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
 * Forwards requests to one internal service (`http.request` on a keep-alive agent), behind opossum
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
 * - The request goes out with the client's end-to-end headers (hop-by-hop ones dropped),
 *   `X-Forwarded-For/Port/Proto/Host`, the gateway's `X-Request-Id`, and what `onProxyReq` sets.
 *   Its body is held in full before it leaves (`bodyOf`; read first if nothing read it ahead),
 *   so that `onProxyReq` can sign its bytes and a request met by a stale pooled socket can be
 *   sent again; it is never re-serialised when its bytes are at hand. The answer's status,
 *   end-to-end headers and body are relayed as they come.
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

  /** Responses already answered (503 written or upstream answer relayed). */
  const answered = new WeakSet<ForwardedResponse>();
  const inFlight = new Set<ClientRequest>();
  const agentOptions = { keepAlive: true, timeout: UPSTREAM_FREE_SOCKET_TIMEOUT_MS };
  const agent = new URL(target).protocol === 'https:' ? new https.Agent(agentOptions) : new http.Agent(agentOptions);

  const unavailable = ApiError.of('service_unavailable', `${name} is unavailable`);
  const respondUnavailable = (res: ForwardedResponse): void => {
    if (answered.has(res) || res.headersSent || res.writableEnded || res.destroyed) return;
    answered.add(res);
    sendRefusal(res, unavailable);
  };
  const respondTimedOut = (res: ForwardedResponse, waited: number, awaited: boolean): void => {
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
    sendRefusal(res, timedOut);
  };

  const targetUrl = new URL(target);
  const request = targetUrl.protocol === 'https:' ? https.request : http.request;
  const basePath = targetUrl.pathname === '/' ? '' : targetUrl.pathname.replace(/\/$/, '');

  /**
   * Sends `req` upstream and relays the answer into `res`, settling `attempt` on the answer's
   * headers. A request that met a pooled socket the service had just closed is sent once more,
   * on a connection of its own (`resend`).
   */
  const send = (req: ForwardedRequest, res: ForwardedResponse, attempt: Attempt, resend = false): void => {
    const proxyReq = request({
      // `false`: a new connection, closed after the answer.
      agent: resend ? false : agent,
      protocol: targetUrl.protocol,
      hostname: targetUrl.hostname,
      port: targetUrl.port,
      method: req.method,
      path: basePath + (options.pathRewrite ? options.pathRewrite(req.url, req) : req.url),
      headers: forwardedHeaders(req, res),
    });
    attempt.proxyReq = proxyReq;
    inFlight.add(proxyReq);
    proxyReq.once('close', () => inFlight.delete(proxyReq));
    // Socket idle limit, also while the response body streams; a write's covers the time its
    // late answer is awaited.
    proxyReq.setTimeout(isWrite(req.method) ? writeTimeoutMs + lateAnswerMs : timeoutMs, () => proxyReq.destroy());
    const unanswered = noAnswerYet(proxyReq);
    proxyReq.on('error', (error) => {
      if (!resend && !attempt.settled && isStaleSocket(proxyReq, error) && unanswered() && mayResend(req)) {
        return send(req, res, attempt, true);
      }
      onUpstreamError(error, req, res, attempt);
    });
    proxyReq.once('response', (proxyRes) => onUpstreamResponse(proxyRes, req, res, attempt));
    // The client left while the answer streamed: stop reading it, freeing the upstream socket.
    res.once('close', () => {
      if (!res.writableFinished && !lateAnswers.has(req)) proxyReq.destroy();
    });
    try {
      // Headers first: writing the body sends them.
      const body = bodyOf(req);
      onProxyReq?.(proxyReq, req, body);
      writeBody(proxyReq, req, body);
    } catch (error) {
      attempt.fail(toError(error));
    }
  };

  const onUpstreamResponse = (
    proxyRes: IncomingMessage,
    req: ForwardedRequest,
    res: ForwardedResponse,
    attempt: Attempt,
  ): void => {
    if (attempt.settled) {
      // A late answer after the 503 or 504 went out: read it for `awaitLateAnswer`, or drop the
      // upstream socket.
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
    relayResponse(proxyRes, res);
  };

  const onUpstreamError = (error: Error, req: ForwardedRequest, res: ForwardedResponse, attempt: Attempt): void => {
    if (!attempt.settled) {
      attempt.fail(error);
      return;
    }
    // After the attempt settled: the 503 is already out, or the body was streaming.
    lateAnswers.get(req)?.(undefined);
    if (res.headersSent && !res.writableEnded) res.destroy();
  };

  const forward = (req: ForwardedRequest, res: ForwardedResponse): Promise<void> =>
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
      res.once('close', onClientGone);
      send(req, res, attempt);
    });

  /**
   * Registers the late-answer callback of a timed-out write, called once: with the answer, or
   * with `undefined` when the upstream request fails or `lateAnswerMs` passes first.
   */
  const awaitLate = (req: ForwardedRequest, res: ForwardedResponse, proxyReq: ClientRequest | undefined): boolean => {
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
  const breakers = new IsolatedBreaker<[ForwardedRequest, ForwardedResponse], void>(forward, {
    name,
    blame: blameUpstreamFailure,
    resetTimeout: resetTimeoutMs,
    ...DEFAULT_BREAKER_OPTIONS,
    ...options.breaker,
  });
  const callerOf = options.callerOf ?? clientAddress;

  const fire = (req: ForwardedRequest, res: ForwardedResponse): void => {
    breakers.fire(callerOf(req, res), req, res).catch((error: unknown) => {
      // Attempt failures have answered already; this answers an open breaker, the caller's or the
      // upstream's (EOPENBREAKER), or a closed upstream (ESHUTDOWN).
      respondUnavailable(res);
      onError?.(toError(error), req, res);
    });
  };
  // A body still unread is read first, outside the upstream's timeout and breakers: a slow
  // upload is the client's doing, not the service's.
  const handler = (req: ForwardedRequest, res: ForwardedResponse): void => {
    if (!isUnread(req)) return fire(req, res);
    void readBody(req, res).then((read) => read && fire(req, res));
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

/**
 * A pooled socket that the service closed as the request went out: reused, and reset (or its
 * write refused). Sent again only when nothing of the answer came (`noAnswerYet`) and the
 * request may be repeated (`mayResend`); its body is held (`bodyOf`) to be sent again. This is
 * the retry that Node's undici and Go's HTTP client make on a stale keep-alive socket.
 */
function isStaleSocket(proxyReq: ClientRequest, error: Error): boolean {
  const { code } = error as { code?: unknown };
  return proxyReq.reusedSocket && (code === 'ECONNRESET' || code === 'EPIPE');
}

/**
 * Whether a request may be sent a second time. A reset without an answer cannot tell a socket
 * the service had closed (it never read the request) from a service that read it, did it and
 * died before answering. So: methods that are idempotent by definition (RFC 9110 9.2.2), and
 * a POST or PATCH only when it carries an `Idempotency-Key`, under which the services that
 * move money do it once (a refund's id derives from it; switches and creations hold first).
 */
function mayResend(req: ForwardedRequest): boolean {
  return IDEMPOTENT_METHODS.has(req.method) || req.headers['idempotency-key'] !== undefined;
}

const IDEMPOTENT_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE']);

/** Whether no byte of an answer has arrived on the request's socket since the request got it. */
function noAnswerYet(proxyReq: ClientRequest): () => boolean {
  let readBefore: number | undefined;
  proxyReq.once('socket', (socket) => (readBefore = socket.bytesRead));
  return () => readBefore !== undefined && proxyReq.socket?.bytesRead === readBefore;
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/**
 * Headers that describe one connection, not the request (RFC 9110 7.6.1), and `expect`: Node
 * already answered `100 Continue`. Never forwarded, either way: a client's `Connection: close`
 * would otherwise close a pooled upstream socket, and the upstream's would close the client's.
 */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'expect',
]);

const isHopByHop = (name: string, connectionTokens: readonly string[]): boolean =>
  HOP_BY_HOP.has(name) || connectionTokens.includes(name);

/**
 * The caller's credentials: the gateway checked them and vouches for the caller in signed
 * identity headers, so a service never holds a Secret Key, a bearer token or a session cookie.
 */
const CREDENTIALS = new Set(['authorization', 'cookie', 'proxy-authorization']);

/** Header names a `Connection` header lists: hop-by-hop too (`keep-alive` and `close`, the usual values, list none). */
const connectionTokens = (value: string | string[] | undefined): string[] =>
  typeof value !== 'string' || value === 'keep-alive' || value === 'close'
    ? []
    : value
        .toLowerCase()
        .split(',')
        .map((token) => token.trim());

/**
 * The client's headers without the hop-by-hop ones and its credentials, with the `X-Forwarded-*` a proxy adds and
 * the gateway's request id, so that the service's log lines carry the same id.
 */
function forwardedHeaders(req: ForwardedRequest, res: ForwardedResponse): http.OutgoingHttpHeaders {
  const incoming = req.headers;
  const listed = connectionTokens(incoming.connection);
  const headers: http.OutgoingHttpHeaders = {};
  for (const name in incoming) {
    if (!isHopByHop(name, listed) && !CREDENTIALS.has(name)) headers[name] = incoming[name];
  }
  const encrypted = (req.socket as { encrypted?: boolean }).encrypted === true;
  const append = (name: string, value: string) => {
    const given = incoming[name];
    headers[name] = typeof given === 'string' && given !== '' ? `${given},${value}` : value;
  };
  append('x-forwarded-for', req.socket.remoteAddress ?? '');
  append('x-forwarded-port', /:(\d+)$/.exec(incoming.host ?? '')?.[1] ?? (encrypted ? '443' : '80'));
  append('x-forwarded-proto', encrypted ? 'https' : 'http');
  headers['x-forwarded-host'] = incoming['x-forwarded-host'] ?? incoming.host ?? '';
  const requestId: unknown = res.locals?.requestId;
  if (typeof requestId === 'string') headers['x-request-id'] = requestId;
  return headers;
}

const NO_BODY = Buffer.alloc(0);

/**
 * The body as it is sent, held in full before the request leaves, so that its signature can
 * cover its SHA-256 and a request can be sent again: read ahead (`rawBody`, by the idempotency
 * check, the admin API's JSON parser or `readBody`) it is sent as it came. Only a body that
 * some other parser consumed without keeping its bytes is written again from its parsed form.
 */
function bodyOf(req: ForwardedRequest): Buffer {
  if (Buffer.isBuffer(req.rawBody)) return req.rawBody;
  if (req.readableEnded) return Buffer.from(reserialisedBody(req) ?? '');
  return NO_BODY;
}

/** A request without a body is ended at once, as it came (no `Content-Length: 0` added). */
function writeBody(proxyReq: ClientRequest, req: ForwardedRequest, body: Buffer): void {
  if (body.length === 0 && !hasBody(req)) return void proxyReq.end();
  proxyReq.setHeader('content-length', body.length);
  proxyReq.end(body);
}

const isUnread = (req: ForwardedRequest): boolean =>
  !Buffer.isBuffer(req.rawBody) && !req.readableEnded && hasBody(req);

/**
 * Reads a body nothing read ahead into `rawBody` (hosted-page and portal forms, PATCH and
 * DELETE bodies); false when the client went away or the body is too large (answered 413).
 */
async function readBody(req: ForwardedRequest, res: ForwardedResponse): Promise<boolean> {
  try {
    req.rawBody = await readRequestBody(req);
    return true;
  } catch (error) {
    if (!(error instanceof ApiError)) return false; // The client went away while sending it.
    res.setHeader('Connection', 'close');
    sendRefusal(res, error);
    return false;
  }
}

/** HTTP/1.1 framing: a request has a body only with `Transfer-Encoding` or a non-zero `Content-Length`. */
const hasBody = (req: ForwardedRequest): boolean =>
  req.headers['transfer-encoding'] !== undefined ||
  (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

function reserialisedBody(req: ForwardedRequest): string | undefined {
  const body: unknown = req.body;
  const type = req.headers['content-type'] ?? '';
  if (body === undefined || body === null) return undefined;
  if (type.includes('application/json') || type.includes('+json')) return JSON.stringify(body);
  if (type.includes('application/x-www-form-urlencoded')) {
    return new URLSearchParams(body as Record<string, string>).toString();
  }
  if (type.includes('text/plain') && typeof body === 'string') return body;
  return undefined;
}

/** The upstream's status and end-to-end headers (over any the gateway set), then its body, streamed. */
function relayResponse(proxyRes: IncomingMessage, res: ForwardedResponse): void {
  const listed = connectionTokens(proxyRes.headers.connection);
  res.statusCode = proxyRes.statusCode ?? 502;
  if (proxyRes.statusMessage) res.statusMessage = proxyRes.statusMessage;
  for (const name in proxyRes.headers) {
    const value = proxyRes.headers[name];
    if (value !== undefined && !isHopByHop(name, listed)) res.setHeader(name, value);
  }
  proxyRes.pipe(res);
}
