import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ApiError, type CallerIdentity, badRequest } from '@billing/contracts';
import { byteOrderMarkRefusal, startsWithByteOrderMark } from '@billing/service';
import type { Request, RequestHandler, Response } from 'express';
import { readRequestBody } from '../request-body';
import { requestHash } from './request-hash';
import { type IdempotencyScope, type IdempotencyStore, type StoredResponse } from './store';

export const IDEMPOTENCY_HEADERS = { key: 'idempotency-key', replay: 'idempotency-replay' } as const;
const MAX_KEY_LENGTH = 255;
/** Response headers a replay repeats; the rest (dates, rate-limit counters) belong to the new answer. */
const REPLAYED_HEADERS = ['content-type', 'location'];

/** The request body, read once here so that it can be hashed and still be forwarded. */
export type RequestWithRawBody = Request & { rawBody?: Buffer };

/** An answer to keep for the key, e.g. an upstream's answer that came after the gateway's 504. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Set on `res.locals` for a request that claimed its key. Called before a 504 for a write that
 * may still be applied: the 504 is then not an answer to forget; the claim stays in flight
 * (a retry gets 409) until the returned callback brings the real answer, which is kept and
 * replayed like any other (or, `undefined` or a 5xx, forgets the claim so a retry runs again).
 */
export type AwaitOutcome = () => (answer: KeptAnswer | undefined) => void;
export const AWAIT_OUTCOME = 'awaitIdempotentOutcome';

export interface IdempotencyOptions {
  /**
   * Whether the answer to a POST sent without the header is kept under the key generated for
   * it. Not on a route whose body carries its own key (`PublicRoute.bodyKeyed`): the route
   * applies once per that key, and a retry with the generated key gets the same answer from it.
   */
  keepGeneratedKeys: boolean;
}

/**
 * `Idempotency-Key` on every public POST (DESIGN; spec "Idempotency"): without the header a
 * UUID is generated and returned in it (and kept, unless `keepGeneratedKeys` is false). Keys are
 * per API key. The same key with the same method,
 * path and body (JSON compared parsed, see `requestHash`) within 24 hours replays the stored
 * answer with `Idempotency-Replay: true`; with another body it is `400 idempotency_key_mismatch`;
 * while the first request runs it is `409 conflict`. A 5xx answer is not kept, so a retry runs
 * again; but a 504 for a write that may still be applied keeps the claim until the service's
 * answer comes (`AwaitOutcome`, docs/decisions/0005). Mount it only on routes that exist, so
 * that a mistyped path does not use up a key.
 */
export function idempotency(
  store: IdempotencyStore,
  now: () => Date,
  onError: (error: unknown) => void,
  { keepGeneratedKeys }: IdempotencyOptions = { keepGeneratedKeys: true },
): RequestHandler {
  return async (req, res, next) => {
    const given = req.get(IDEMPOTENCY_HEADERS.key);
    if (given !== undefined && (given.trim() === '' || given.length > MAX_KEY_LENGTH)) {
      throw badRequest(`Idempotency-Key must be 1-${MAX_KEY_LENGTH} characters`);
    }
    const key = given ?? randomUUID();
    res.setHeader(IDEMPOTENCY_HEADERS.key, key);
    const body = await readForwardedBody(req);
    if (given === undefined && !keepGeneratedKeys) return next();
    const caller = res.locals.caller as CallerIdentity;
    const scope = { apiKeyId: caller.keyId, key };
    const claim = await store.claim(scope, requestHash(req, body), now());
    switch (claim.outcome) {
      case 'replay':
        return replay(res, claim.response);
      case 'mismatch':
        throw new ApiError(
          400,
          'idempotency_key_mismatch',
          'This Idempotency-Key was used with another request; use a new key for a new request',
        );
      case 'in_flight':
        throw ApiError.of('conflict', 'A request with this Idempotency-Key is still in progress; retry later');
      case 'proceed':
        remember(res, store, scope, onError);
        return next();
    }
  };
}

/**
 * A public POST's body, read ahead (the gateway leaves public bodies unread: read here, hashed,
 * and forwarded as they came, `rawBody`), and refused as the service would refuse it (docs/errors.md,
 * "One reading of a body"): over 1 MB 413 (`readRequestBody`), a leading BOM 400.
 */
export async function readForwardedBody(req: IncomingMessage & { rawBody?: unknown }): Promise<Buffer> {
  const body = await readRequestBody(req);
  if (startsWithByteOrderMark(body)) throw byteOrderMarkRefusal();
  req.rawBody = body;
  return body;
}

function replay(res: Response, stored: StoredResponse) {
  for (const [name, value] of Object.entries(stored.headers)) res.setHeader(name, value);
  res.setHeader(IDEMPOTENCY_HEADERS.replay, 'true');
  res.status(stored.status).send(stored.body);
}

/**
 * Copies the answer as it is written and keeps it before the last byte goes out, so that a
 * client retrying the moment it has the answer gets the replay, not a 409. A 5xx, or a client
 * gone before the end, forgets the claim instead.
 */
function remember(res: Response, store: IdempotencyStore, scope: IdempotencyScope, onError: (error: unknown) => void) {
  const chunks: Buffer[] = [];
  const collect = (chunk: unknown, encoding?: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk), encodingOf(encoding)));
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  let settled = false;
  let awaited = false;
  const awaitOutcome: AwaitOutcome = () => {
    awaited = true;
    let kept = false;
    return (answer) => {
      if (kept) return;
      kept = true;
      const saved =
        answer && answer.status < 500
          ? store.complete(scope, { status: answer.status, headers: pick(answer.headers), body: answer.body })
          : store.release(scope);
      saved.catch(onError);
    };
  };
  res.locals[AWAIT_OUTCOME] = awaitOutcome;
  // Held back until the answer is kept: a proxied body arrives by write(), and a client that has
  // every byte (Content-Length) may retry before end() is even called.
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (awaited) return write(chunk, ...rest);
    collect(chunk, rest[0]);
    return true;
  }) as Response['write'];
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    collect(chunk, rest[0]);
    settled = true;
    // The outcome comes later (AwaitOutcome); this answer (a 504) is not the request's.
    if (awaited) return end(chunk, ...rest);
    const saved =
      res.statusCode < 500
        ? store.complete(scope, {
            status: res.statusCode,
            headers: replayedHeaders(res),
            body: Buffer.concat(chunks).toString('utf8'),
          })
        : store.release(scope);
    const callback = [chunk, ...rest].find((arg) => typeof arg === 'function');
    saved.catch(onError).finally(() => end(Buffer.concat(chunks), callback));
    return res;
  }) as Response['end'];
  res.once('close', () => {
    if (!settled) store.release(scope).catch(onError);
  });
}

function replayedHeaders(res: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const value = res.getHeader(name);
    if (value !== undefined) headers[name] = String(value);
  }
  return headers;
}

function pick(given: Record<string, string>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) if (given[name] !== undefined) headers[name] = given[name];
  return headers;
}

const encodingOf = (value: unknown): BufferEncoding => (typeof value === 'string' ? (value as BufferEncoding) : 'utf8');
