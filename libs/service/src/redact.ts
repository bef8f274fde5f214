/**
 * What never reaches a log line: secrets (API keys, the admin token, client secrets, webhook
 * signing secrets, the internal signature), their hashes, card data, personal data (emails,
 * names) and the parameter values a database error carries. `createLogger` runs every logged
 * object, error and message through here (docs/decisions/0007-internal-trust-and-secrets-in-logs.md).
 */

export const REDACTED = '[redacted]';

/** Field names (compared lower-case, `-` and `_` ignored) whose values are never logged. */
const SECRET_FIELDS = new Set(
  [
    'authorization',
    'cookie',
    'set-cookie',
    'x-service-secret-key',
    'x-service-publishable-key',
    'x-recur-secret-key',
    'x-recur-publishable-key',
    'sdk_token',
    'credit_token',
    'x-billing-signature',
    'password',
    'token',
    'admin_token',
    'api_key',
    'secret',
    'secret_key',
    'publishable_key',
    'client_secret',
    'signing_secret',
    'internal_secret',
    'plaintext',
    'hash',
    'key_hash',
    'card',
    'card_number',
    'cvc',
    'cvv',
    'exp',
    'email',
    'customer_email',
    'customer_name',
    'billing_name',
    'phone',
    'address',
    // What a database error carries besides its code: the statement's values (PGlite's
    // `params`), the offending row (`detail`: `Key (email)=(ada@example.com) already exists`).
    'params',
    'parameters',
    'values',
    'detail',
    'where',
    'internal_query',
    'query_options',
  ].map((name) => normalise(name)),
);

function normalise(name: string): string {
  return name.toLowerCase().replace(/[-_]/g, '');
}

export const isSecretField = (name: string): boolean => SECRET_FIELDS.has(normalise(name));

/** No `/` before the `@`: `node_modules/@billing/...` in a stack is not an email. */
const EMAIL = /[^\s@"'<>(),;:/\\]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
/** Our own secrets by their shape: API keys, the admin token, client and webhook secrets. */
const TOKENS = [
  /\b[sp]k_(?:test|live)_[A-Za-z0-9]+/g,
  /\badm_[A-Za-z0-9_-]{16,}/g,
  /\b[A-Za-z0-9]+_secret_[A-Za-z0-9]+/g,
  /\bwhsec_[A-Za-z0-9+/=]+/g,
  // An embedded checkout's card-form token (`cft_<session id>_<random>`).
  /\bcft_[A-Za-z0-9_]+/g,
];
/** 13 to 19 digits, spaces or dashes between: masked when they pass the Luhn check. */
const CARD_CANDIDATE = /\b\d(?:[ -]?\d){12,18}\b/g;
/** SHA-256 in hex, as the API-key hashes are stored. */
const SHA256_HEX = /\b[a-f0-9]{64}\b/g;

function luhn(digits: string): boolean {
  let sum = 0;
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/**
 * Where a URL's path itself is the credential, the segment after these prefixes: the customer
 * portal (`/portal/<session id>/<access token>/...`), a dashboard invitation
 * (`/dashboard/invite/<token>`), an embedded checkout's card form
 * (`/sandbox/card-form/<card-form token>`) and a renewal invoice's page at ECPay
 * (`/checkout/invoice-payments/<page token>`). By prefix, so every route under one is covered. Only
 * at the root of a path (start, after a space, quote, `=` or a URL's host): a stack trace's
 * `.../src/portal/page/routes.ts` is not a URL.
 */
const PATH_ROOT = String.raw`(?<=^|[\s"'(=]|\/\/[^/\s"'?#]+)`;
const SEGMENT = String.raw`[^/?#\s"']+`;
const CAPABILITY_PREFIXES = [
  String.raw`/portal/${SEGMENT}/`,
  '/dashboard/invite/',
  '/sandbox/card-form/',
  '/checkout/invoice-payments/',
];
const CAPABILITY_PATHS = CAPABILITY_PREFIXES.map((prefix) => new RegExp(`${PATH_ROOT}(${prefix})${SEGMENT}`, 'g'));
/** 32 random bytes or an HMAC-SHA256 in base64url, as our URL tokens are made, as a whole path segment. */
const BASE64URL_TOKEN_SEGMENT = /(?<=\/)[A-Za-z0-9_-]{43}(?=$|[/?#\s"'])/g;
/** A query parameter: its value is masked when its name is a secret's (`token`, `client_secret`, ...). */
const QUERY_PARAMETER = /([?&])([^=&#\s"']+)=([^&#\s"']*)/g;
const QUERY_CREDENTIALS = new Set(['key', 'accesstoken', 'code', 'signature', 'sig', 'invite']);
const isCredentialParameter = (name: string) => isSecretField(name) || QUERY_CREDENTIALS.has(normalise(name));

/** Every credential a URL in the text carries, in its path or its query, masked. */
function redactUrlCredentials(text: string): string {
  let out = text;
  for (const path of CAPABILITY_PATHS) out = out.replace(path, `$1${REDACTED}`);
  out = out.replace(BASE64URL_TOKEN_SEGMENT, REDACTED);
  return out.replace(QUERY_PARAMETER, (match, separator: string, name: string) =>
    isCredentialParameter(name) ? `${separator}${name}=${REDACTED}` : match,
  );
}

/**
 * A free-text value with every email, secret-shaped token, card number, SHA-256 and credential
 * in a URL masked.
 */
export function redactText(text: string): string {
  let out = redactUrlCredentials(text).replace(EMAIL, REDACTED);
  for (const token of TOKENS) out = out.replace(token, REDACTED);
  out = out.replace(SHA256_HEX, REDACTED);
  return out.replace(CARD_CANDIDATE, (match) => (luhn(match.replace(/\D/g, '')) ? REDACTED : match));
}

/** SQLSTATE class 22 (data exception) messages quote the offending value: `... integer: "abc"`. */
const isDataException = (code: unknown) => typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code);
const QUOTED = /"(?:[^"\\]|\\.)*"/g;

const MAX_DEPTH = 8;

/** An error as a log field: type, message, stack, code and its other fields, all redacted. */
export function redactError(err: unknown, depth = 0): unknown {
  if (!(err instanceof Error)) return redactValue(err, depth);
  const { code } = err as { code?: unknown };
  const scrub = (text: string) => redactText(isDataException(code) ? text.replace(QUOTED, `"${REDACTED}"`) : text);
  const out: Record<string, unknown> = { type: err.constructor?.name ?? err.name, message: scrub(err.message) };
  if (err.stack) out.stack = scrub(err.stack);
  for (const [key, value] of Object.entries(err)) {
    if (key === 'message' || key === 'stack') continue;
    out[key] = isSecretField(key) ? REDACTED : redactValue(value, depth + 1);
  }
  if (err.cause !== undefined) out.cause = redactError(err.cause, depth + 1);
  if (err instanceof AggregateError) out.errors = err.errors.map((inner) => redactError(inner, depth + 1));
  return out;
}

/** Any logged value, deeply: secret fields masked, strings scrubbed, errors serialised. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[too deep]';
  if (value instanceof Error) return redactError(value, depth);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (value instanceof Date) return value;
  if (Buffer.isBuffer(value)) return `[${value.length} bytes]`;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    out[key] = isSecretField(key) && inner !== null && inner !== undefined ? REDACTED : redactValue(inner, depth + 1);
  }
  return out;
}

/**
 * The path of a request as logged: without its query string (emails, external ids) and with
 * the merchant's own customer ids (`/customers/external/<id>`, often an email) masked.
 */
export function pathForLog(originalUrl: string): string {
  const path = originalUrl.split('?', 1)[0] ?? originalUrl;
  return redactText(path.replace(/(\/customers\/external\/)[^/]+/, `$1${REDACTED}`));
}
