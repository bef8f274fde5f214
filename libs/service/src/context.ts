import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { newId } from '@billing/contracts';
import type { Logger } from 'pino';
import { pathForLog } from './redact';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    /** Set by the request-context middleware before any route runs. */
    interface Locals {
      requestId: string;
      /** Child logger carrying `request_id`; use it for every log line of the request. */
      log: Logger;
    }
  }
}

export const REQUEST_ID_HEADER = 'X-Request-Id';

const SANE_REQUEST_ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/** A caller's request id is kept only when it cannot smuggle anything into headers or logs. */
export function isSaneRequestId(value: string | undefined): value is string {
  return value !== undefined && SANE_REQUEST_ID.test(value);
}

/** Probes and scrapes hit every few seconds; at `info` they would drown the real traffic. */
const PROBE_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

const LINE_MESSAGES = {
  error: 'request failed',
  warn: 'request aborted by client',
  info: 'request completed',
  debug: 'request completed',
} as const;

/**
 * Assigns the request id, exposes `res.locals.requestId` and `res.locals.log`, and writes
 * one log line per request when the response finishes (or the client goes away). The child
 * logger is made only when something asks for it: most requests never do, and making one costs
 * more than the request's own line.
 */
export function requestContext(logger: Logger): RequestHandler {
  const track = requestTracker(logger);
  return (req, res, next) => {
    track(req, res);
    next();
  };
}

/** `requestContext` on node's own request and response, for a lane that runs before express. */
export function requestTracker(logger: Logger) {
  return (
    req: IncomingMessage & { originalUrl: string },
    res: ServerResponse & { locals: Record<string, unknown> },
  ): void => {
    const started = process.hrtime.bigint();
    const incoming = req.headers['x-request-id'];
    const requestId = typeof incoming === 'string' && isSaneRequestId(incoming) ? incoming : newId('request');
    res.locals.requestId = requestId;
    let log: Logger | undefined;
    Object.defineProperty(res.locals, 'log', {
      configurable: true,
      enumerable: true,
      get: () => (log ??= logger.child({ request_id: requestId })),
      set: (value: Logger) => void (log = value),
    });
    res.setHeader(REQUEST_ID_HEADER, requestId);

    let logged = false;
    const done = (): void => {
      if (logged) return;
      logged = true;
      const aborted = !res.writableFinished;
      const probe = PROBE_PATHS.has(req.originalUrl.split('?', 1)[0]!);
      const level = res.statusCode >= 500 ? 'error' : aborted ? 'warn' : probe ? 'debug' : 'info';
      if (!(log ?? logger).isLevelEnabled(level)) return;
      const fields = {
        method: req.method,
        // The query string is left out, and external customer ids masked: they can carry emails.
        path: pathForLog(req.originalUrl),
        status: res.statusCode,
        duration_ms: Math.round(Number(process.hrtime.bigint() - started) / 1e4) / 100,
        ...(aborted ? { aborted: true } : {}),
      };
      (res.locals.log as Logger)[level](fields, LINE_MESSAGES[level]);
    };
    res.once('finish', done);
    res.once('close', done);
  };
}
