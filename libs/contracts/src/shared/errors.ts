import { z } from 'zod';

/** The general error codes of the spec, with the HTTP status each one answers. */
export const GENERAL_ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  validation_error: 422,
  rate_limit_exceeded: 429,
  internal_server_error: 500,
  service_unavailable: 503,
  /** The gateway's wait for a service ended; a write may still be applied (docs/decisions/0005). */
  gateway_timeout: 504,
} as const;

/** Customer endpoints answer with their own codes (spec: Errors > Customer endpoints). */
export const CUSTOMER_ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  resource_not_found: 404,
  conflict: 409,
  validation_error: 422,
  internal_error: 500,
} as const;

/** Portal-session endpoints add `error.type` = `invalid_request_error` to the envelope. */
export const PORTAL_ERROR_STATUS = {
  invalid_param: 400,
  missing_return_url: 400,
  invalid_api_key: 401,
  customer_not_found: 404,
} as const;

export const IDEMPOTENCY_ERROR_STATUS = {
  idempotency_key_mismatch: 400,
  idempotency_key_in_use: 409,
} as const;

export type GeneralErrorCode = keyof typeof GENERAL_ERROR_STATUS;
export type CustomerErrorCode = keyof typeof CUSTOMER_ERROR_STATUS;
export type PortalErrorCode = keyof typeof PORTAL_ERROR_STATUS;
export type IdempotencyErrorCode = keyof typeof IDEMPOTENCY_ERROR_STATUS;
export type ErrorCode = GeneralErrorCode | CustomerErrorCode | PortalErrorCode | IdempotencyErrorCode;

export const ErrorDetail = z
  .object({
    path: z.string().describe('Dotted path of the offending field; empty for the body itself'),
    message: z.string(),
    code: z.string().describe('Machine-readable reason, such as invalid_type or too_small'),
  })
  .meta({ id: 'ErrorDetail' });
export type ErrorDetail = z.infer<typeof ErrorDetail>;

export const ErrorEnvelope = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      type: z.string().optional().describe('Portal sessions only: invalid_request_error'),
      doc_url: z.string().optional(),
      details: z.array(z.unknown()).optional(),
    }),
  })
  .meta({ id: 'Error' });
export type ErrorEnvelope = z.infer<typeof ErrorEnvelope>;

/**
 * The one error type that crosses the HTTP edge. Domain code throws it (or a subclass);
 * one middleware turns it into the spec's envelope and status.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | (string & {}),
    message: string,
    readonly details?: unknown[],
    readonly type?: string,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toEnvelope(): ErrorEnvelope {
    const error: ErrorEnvelope['error'] = { code: this.code, message: this.message };
    if (this.type) error.type = this.type;
    if (this.details && this.details.length > 0) error.details = this.details;
    return { error };
  }

  static of(code: GeneralErrorCode, message: string, details?: unknown[]): ApiError {
    return new ApiError(GENERAL_ERROR_STATUS[code], code, message, details);
  }
}

export const badRequest = (message: string, details?: unknown[]) => ApiError.of('bad_request', message, details);
export const notFound = (message = 'Resource not found') => ApiError.of('not_found', message);
export const conflict = (message: string, details?: unknown[]) => ApiError.of('conflict', message, details);
export const unauthorized = (message = 'Invalid or missing API key') => ApiError.of('unauthorized', message);
export const forbidden = (message = 'Not permitted') => ApiError.of('forbidden', message);
export const validationError = (details: ErrorDetail[], message = 'Request validation failed') =>
  ApiError.of('validation_error', message, details);

/** Where a request parameter travels: the path or the query string. */
export type ParameterLocation = 'path' | 'query';

/**
 * 400 `bad_request` for path or query parameters that fail (spec: "invalid or missing
 * parameters"); the message names them and `details[]` says why. Bodies answer 422 instead.
 */
export function invalidParameters(location: ParameterLocation, details: ErrorDetail[]): ApiError {
  const names = [...new Set(details.map((d) => d.path || '(all)'))].join(', ');
  return badRequest(`Invalid ${location} parameter: ${names}`, details);
}

/** 400 for a cursor (`starting_after`) that names no item of this list, for example another tenant's. */
export function unknownCursor(id: string, noun: string, parameter = 'starting_after'): ApiError {
  return invalidParameters('query', [{ path: parameter, message: `No such ${noun}: ${id}`, code: 'unknown_cursor' }]);
}

/** Turns zod issues into the spec's `details[]` of `{path, message, code}`. */
export function detailsFromZodIssues(issues: readonly z.core.$ZodIssue[]): ErrorDetail[] {
  return issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
    code: issue.code,
  }));
}
