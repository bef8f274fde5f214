import { ApiError, customerError } from '@billing/contracts';
import { DEFAULT_BODY_LIMIT, type RequestSchemas, type ValidatedHandler, toApiError, validate } from '@billing/service';
import type { ErrorRequestHandler } from 'express';

/**
 * Customer endpoints answer with their own codes (spec: 400 `invalid_request`, 404
 * `resource_not_found`, 500 `internal_error`); everything the shared middleware raises with a
 * general code is translated here, after the customer routes.
 */
export const customerErrorCodes: ErrorRequestHandler = (err, _req, res, next) => {
  next(customerErrorOf(err, res.locals.log));
};

/**
 * `err` in the customer endpoints' codes (`customerErrorCodes`, and a route lane's
 * `translateError`). A failure translated into a 5xx is logged here as it was: the shared
 * handler only sees its translation.
 */
export function customerErrorOf(err: unknown, log: unknown): unknown {
  const translated = toCustomerError(err);
  if (translated !== err && translated instanceof ApiError && translated.status >= 500) {
    (log as { error?: (details: object, message: string) => void } | undefined)?.error?.({ err }, 'request error');
  }
  return translated;
}

const TRANSLATED: Record<string, 'invalid_request' | 'resource_not_found' | 'internal_error'> = {
  bad_request: 'invalid_request',
  not_found: 'resource_not_found',
  internal_server_error: 'internal_error',
};

function toCustomerError(err: unknown): unknown {
  if (err instanceof ApiError) {
    const code = TRANSLATED[err.code];
    return code ? customerError(code, err.message, err.details) : err;
  }
  if (err instanceof Error && 'status' in err && typeof err.status === 'number' && err.status < 500) {
    // body-parser's malformed JSON; the shared handler would call it bad_request.
    const type = 'type' in err ? err.type : undefined;
    return type === 'entity.parse.failed' ? customerError('invalid_request', 'Request body is not valid JSON') : err;
  }
  // A write that lost to concurrent writers of the customer (after the event store's retries)
  // is 409 conflict here as everywhere, not a 500 (docs/decisions/0005).
  const general = toApiError(err, DEFAULT_BODY_LIMIT);
  if (general.code === 'conflict') return customerError('conflict', general.message);
  return customerError('internal_error', 'An internal error occurred');
}

/**
 * `validate` for customer endpoints: a bad query or path parameter (400 `bad_request` from
 * `validate`) leaves as 400 `invalid_request` with the same message and `details[]`, wherever
 * the route is mounted; a body that fails its schema stays 422 `validation_error`.
 */
export function validateCustomerRequest<S extends RequestSchemas>(schemas: S): ValidatedHandler<S> {
  const inner = validate(schemas);
  return (req, res, next) =>
    inner(req, res, (err?: unknown) => (err === undefined ? next() : next(toCustomerError(err))));
}
