import type { ApiError } from './errors';

/**
 * A refusal as the recur-tw SDK (0.11) reads it (docs/embedded-checkout.md, "Answers to the
 * recur-tw SDK"): its surfaces show `details || error`, `error.message || error` or `error` as
 * text, so each of them is the text; `code` and `error_details` keep what the envelope says.
 */
export function sdkRefusalBody(error: ApiError, text: string = error.message) {
  return {
    error: text,
    code: error.code,
    message: text,
    details: text,
    ...(error.details && { error_details: error.details }),
  };
}
