import type { ApiFailure } from './client';
import type { DashboardLanguage, Translate } from './i18n';

// What a page says of a refusal of the API. In English, the API's own words (they name the
// field and the rule). In zh-TW, the words of the refusal's code and of each field problem's
// code; a code without words here keeps the API's English message, rather than saying nothing.

/** The refusal as a whole, by the envelope's `code` (docs/errors.md). */
export const REFUSAL_WORDS: Readonly<Record<string, string>> = {
  bad_request: 'The request was not understood.',
  invalid_request: 'The request was not understood.',
  validation_error: 'Some values cannot be saved.',
  unauthorized: 'The key or session is not valid.',
  forbidden: 'This is not permitted.',
  not_found: 'It was not found.',
  resource_not_found: 'It was not found.',
  conflict: 'It was changed meanwhile, or exists already: reload and try again.',
  idempotency_key_in_use: 'The same request is still being handled: wait a moment and reload.',
  payload_too_large: 'What was sent is too large.',
  rate_limit_exceeded: 'Too many requests: try again in a minute.',
  service_unavailable: 'A service cannot answer right now: try again in a moment.',
  gateway_timeout: 'A service did not answer in time; the change may still be made: reload to see.',
  internal_server_error: 'Something went wrong on our side.',
  internal_error: 'Something went wrong on our side.',
};

/** A field's problem, by its detail's `code` (zod's, for values of the wrong form). */
export const FIELD_PROBLEM_WORDS: Readonly<Record<string, string>> = {
  too_small: 'too small or too short',
  too_big: 'too large or too long',
  invalid_type: 'not of the expected kind',
  invalid_format: 'not in the expected format',
  invalid_value: 'not one of the accepted values',
  unrecognized_keys: 'not taken here',
  not_multiple_of: 'not a multiple of the step',
};

type Detail = ApiFailure['details'][number];
type Words = { language: DashboardLanguage; t: Translate };

/** A field's problem in the user's language: the API's message in English. */
export function fieldProblem(detail: Detail, { language, t }: Words): string {
  const words = language === 'en' || !detail.code ? undefined : FIELD_PROBLEM_WORDS[detail.code];
  return words ? t(words) : (detail.message ?? '');
}

/**
 * The refusal next to a form or in place of a page: its words, and each field problem that says
 * more after them (`path: problem`; in zh-TW with its full-width marks).
 */
export function refusalText(error: ApiFailure, words: Words): string {
  if (words.language === 'en') return error.explanation;
  const summary = REFUSAL_WORDS[error.code] ? words.t(REFUSAL_WORDS[error.code]!) : error.message;
  return error.explainedAs(summary, (d) => fieldProblem(d, words), { around: ['（', '）'], path: '：', between: '；' });
}
