import { ApiError, RECUR_SDK_HEADER, RECUR_SDK_KEY_HEADERS, sdkRefusalBody } from '@billing/contracts';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorRequestHandler } from 'express';

/** Whether the recur-tw SDK sent the request: its key came in its own header (still there, or handed over). */
export const sentByRecurSdk = (req: IncomingMessage): boolean =>
  req.headers[RECUR_SDK_HEADER] === '1' || RECUR_SDK_KEY_HEADERS.some((name) => req.headers[name] !== undefined);

/**
 * Writes a refusal the gateway makes itself (a rate limit, a service unavailable): the error
 * envelope, or for the recur-tw SDK's calls the shape it reads (docs/embedded-checkout.md), where
 * the envelope would reach its buyer as "[object Object]". Headers set before (`Retry-After`) stay.
 */
export function sendRefusal(res: ServerResponse, error: ApiError): void {
  const body = JSON.stringify(sentByRecurSdk(res.req) ? sdkRefusalBody(error) : error.toEnvelope());
  res.statusCode = error.status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

/** The same for refusals passed on as errors (a wrong key, an Idempotency-Key in use, at capacity). */
export const sdkShapedRefusals: ErrorRequestHandler = (err, req, res, next) => {
  if (!(err instanceof ApiError) || !sentByRecurSdk(req)) return next(err);
  sendRefusal(res, err);
};
