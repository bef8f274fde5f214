import type { RequestHandler } from 'express';
import { type ErrorDetail, invalidParameters, validationError } from '@billing/contracts';

/**
 * Text checked at the edge (docs/errors.md, "Text at the edge"), before any route runs, so
 * that nothing a client typed can fail later in PostgreSQL (which refuses U+0000 in text and
 * lone surrogates in jsonb) or in a log, a header or an email:
 *
 * - every string: no NUL (U+0000), no lone UTF-16 surrogate, no C0 or C1 control character
 *   and no DEL, except tab, line feed and carriage return (`text`);
 * - names, emails, ids, codes, slugs, URLs, enum-like values, object keys, query values and
 *   path segments: not even those three (`line`).
 */
export type TextKind = 'text' | 'line';

export const INVALID_CHARACTERS = 'invalid_characters';
export const TOO_DEEP = 'too_deep';

/** Nesting deeper than this is refused; no request of the API nests beyond a handful of levels. */
export const MAX_JSON_DEPTH = 32;
const MAX_DETAILS = 20;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const CONTROL_IN_TEXT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const CONTROL_IN_LINE = /[\u0000-\u001F\u007F-\u009F]/;

/**
 * Keys whose values are one line: ids (`product_id`, `productId`, `product_ids`), names,
 * emails, slugs, codes, URLs and enum-like fields. Everything else (descriptions, messages,
 * metadata values) may hold tabs and line breaks.
 */
const LINE_KEY = /(?:^|_)(?:ids?|name|email|slug|code|url|key|type|status|mode|environment|currency|locale)$/i;
const LINE_KEY_CAMEL = /[a-z](?:Ids?|Name|Email|Slug|Code|Url|Key)$/;
export const isLineKey = (key: string) => LINE_KEY.test(key) || LINE_KEY_CAMEL.test(key);

const codePoint = (char: string) => `U+${char.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** Why `value` is refused as text of `kind`, or null when it is acceptable. */
export function textProblem(value: string, kind: TextKind): string | null {
  const surrogate = LONE_SURROGATE.exec(value);
  if (surrogate) return `contains a lone UTF-16 surrogate (${codePoint(surrogate[0])})`;
  const control = (kind === 'line' ? CONTROL_IN_LINE : CONTROL_IN_TEXT).exec(value);
  if (!control) return null;
  const char = control[0];
  if (char === '\u0000') return 'contains a NUL character (U+0000)';
  if (kind === 'line' && (char === '\t' || char === '\n' || char === '\r')) {
    return `must be a single line without tabs (contains ${codePoint(char)})`;
  }
  return `contains a control character (${codePoint(char)})`;
}

const detail = (path: string, message: string, code = INVALID_CHARACTERS): ErrorDetail => ({ path, message, code });

interface Pending {
  value: unknown;
  path: string;
  kind: TextKind;
  depth: number;
  /** Under `metadata`: the merchant's free text, whatever its keys are called. */
  metadata: boolean;
}

/**
 * Every refused string in a parsed JSON (or form) value, with its dotted path: keys are `line`
 * text, values `line` or `text` by their key (`isLineKey`), array items by their array's key;
 * with `kind: 'line'` every value is `line` (query strings). Walks without recursion, so a
 * deeply nested body cannot overflow the stack.
 */
export function findTextProblems(value: unknown, options: { kind?: TextKind } = {}): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const forced = options.kind === 'line';
  const stack: Pending[] = [{ value, path: '', kind: options.kind ?? 'text', depth: 0, metadata: false }];
  while (stack.length > 0 && details.length < MAX_DETAILS) {
    const { value: current, path, kind, depth, metadata } = stack.pop()!;
    if (typeof current === 'string') {
      const problem = textProblem(current, kind);
      if (problem) details.push(detail(path, problem));
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) {
      details.push(detail(path, `nests deeper than ${MAX_JSON_DEPTH} levels`, TOO_DEEP));
      continue;
    }
    const join = (key: string) => (path ? `${path}.${key}` : key);
    if (Array.isArray(current)) {
      current.forEach((item, index) =>
        stack.push({ value: item, path: join(String(index)), kind, depth: depth + 1, metadata }),
      );
      continue;
    }
    for (const [key, item] of Object.entries(current)) {
      const keyProblem = textProblem(key, 'line');
      if (keyProblem) {
        details.push(detail(path, `has a key that ${keyProblem}`));
        continue;
      }
      const inMetadata = !forced && (metadata || key === 'metadata');
      const itemKind: TextKind = forced || (!inMetadata && isLineKey(key)) ? 'line' : 'text';
      stack.push({ value: item, path: join(key), kind: itemKind, depth: depth + 1, metadata: inMetadata });
    }
  }
  return details.sort((a, b) => a.path.localeCompare(b.path));
}

/** The URL path's segments, decoded; a segment that does not decode is left to the router (400). */
function pathProblems(path: string): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  path.split('/').forEach((raw, index) => {
    if (!raw.includes('%')) return;
    let decoded: string;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      return;
    }
    const problem = textProblem(decoded, 'line');
    if (problem) details.push(detail(`segment ${index}`, `Path segment ${index} ${problem}`));
  });
  return details;
}

/**
 * The edge check of every service (mounted by `createApp` after the body parser, before the
 * routes): a path segment or query value that breaks the text rules answers 400 `bad_request`,
 * a JSON body 422 `validation_error`, each with `details[]` of `{path, message, code:
 * "invalid_characters"}`. Path first, then query, then body, as `validate()` orders them.
 */
export const refuseInvalidText: RequestHandler = (req, _res, next) => {
  const path = pathProblems(req.path);
  if (path.length > 0) return next(invalidParameters('path', path));
  const query = findTextProblems(req.query, { kind: 'line' });
  if (query.length > 0) return next(invalidParameters('query', query));
  if (req.body !== undefined && typeof req.body === 'object') {
    const body = findTextProblems(req.body);
    if (body.length > 0) return next(validationError(body, 'Request body holds text the API does not accept'));
  }
  next();
};
