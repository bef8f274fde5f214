import type { ErrorRequestHandler, RequestHandler } from 'express';
import type { Logger } from 'pino';
import { ApiError, GENERAL_ERROR_STATUS, notFound } from '@billing/contracts';
import type { LaneResponse } from './lane';
import { writeJson } from './route-lane';

/** The shape of errors raised by body-parser, the router and other `http-errors` users. */
interface HttpError {
  status: number;
  message: string;
  expose?: boolean;
  type?: string;
}

function isHttpError(err: unknown): err is HttpError {
  if (!(err instanceof Error) || !('status' in err)) return false;
  const { status } = err;
  return typeof status === 'number' && status >= 400 && status < 600;
}

const CODE_BY_STATUS = new Map<number, string>(
  Object.entries(GENERAL_ERROR_STATUS).map(([code, status]) => [status, code]),
);

/**
 * Maps anything thrown or passed to `next(err)` to the error the client sees. Only
 * `ApiError`s and client errors flagged `expose` keep their message; everything else becomes a
 * generic 500 so internals never leak.
 */
export function toApiError(err: unknown, bodyLimit: string | number): ApiError {
  if (err instanceof ApiError) return err;
  if (isHttpError(err) && err.status < 500) {
    switch (err.type) {
      case 'entity.too.large':
        return ApiError.of('payload_too_large', `Request body exceeds the ${limitOf(err) ?? String(bodyLimit)} limit`);
      case 'entity.parse.failed':
        return ApiError.of('bad_request', 'Request body is not valid JSON');
    }
    if (err.status === 415) return new ApiError(415, 'unsupported_media_type', exposed(err, 'Unsupported media type'));
    const status = CODE_BY_STATUS.has(err.status) ? err.status : 400;
    return new ApiError(status, CODE_BY_STATUS.get(status) ?? 'bad_request', exposed(err, 'Bad request'));
  }
  if (isWriteConflict(err)) {
    return ApiError.of(
      'conflict',
      'The resource was changed by concurrent requests; this change was not applied, retry the request',
    );
  }
  if (sqlStateOf(err) === UNIQUE_VIOLATION) {
    // A value that must be unique was taken by a concurrent write the route had no name for.
    return ApiError.of('conflict', 'The request conflicts with another resource written at the same time');
  }
  return ApiError.of('internal_server_error', 'An internal error occurred');
}

/** SQLSTATEs of a transaction that lost to a concurrent one: serialization failure, deadlock. */
const CONCURRENCY_SQLSTATES = new Set(['40001', '40P01']);
const UNIQUE_VIOLATION = '23505';

const sqlStateOf = (err: unknown): unknown =>
  typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;

/**
 * A write that lost to concurrent writers of the same record after the event store's bounded
 * retries (`WriteConflictError`, or a version conflict or serialization failure outside
 * `handleCommand`). Nothing was written: `409 conflict`, never a 500
 * (docs/decisions/0005-write-contention-and-timeouts.md). Matched by name, as libs/service does
 * not depend on the event store.
 */
function isWriteConflict(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'WriteConflictError' || err.name === 'ExpectedVersionConflictError') return true;
  const code = sqlStateOf(err);
  return typeof code === 'string' && CONCURRENCY_SQLSTATES.has(code);
}

function exposed(err: HttpError, fallback: string): string {
  return err.expose === true ? err.message : fallback;
}

/** Mounted after every route: nothing matched. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(notFound(`No route for ${req.method} ${req.path}`));
};

/** The one error middleware: every failure leaves as the spec's envelope. */
export function errorHandler(bodyLimit: string | number): ErrorRequestHandler {
  return (err: unknown, _req, res, _next) => {
    const apiError = logged(err, res.locals.log, bodyLimit);
    if (res.headersSent) {
      // Part of the response is on the wire; breaking the connection is the only honest signal.
      res.destroy();
      return;
    }
    res.status(apiError.status).json(apiError.toEnvelope());
  };
}

/** `errorHandler` for a route lane, on node's own response (`writeJson` writes what `res.json` would). */
export function sendErrorOn(bodyLimit: string | number) {
  return (_req: unknown, res: LaneResponse, err: unknown): void => {
    const apiError = logged(err, res.locals.log as Logger, bodyLimit);
    if (res.headersSent) return void res.destroy();
    writeJson(res, apiError.status, apiError.toEnvelope());
  };
}

/** The client's error for `err`, logged as the error handler logs it. */
function logged(err: unknown, log: Logger, bodyLimit: string | number): ApiError {
  const apiError = toApiError(err, bodyLimit);
  if (apiError.status >= 500) log.error({ err }, 'request error');
  else log.debug({ err: { code: apiError.code, message: apiError.message } }, 'client error');
  return apiError;
}

/** The limit a body parser refused a body by, in kb, when it says (a path's own limit may not be the service's). */
function limitOf(err: unknown): string | undefined {
  const limit = (err as { limit?: unknown }).limit;
  return typeof limit === 'number' ? `${Math.round(limit / 1024)}kb` : undefined;
}
