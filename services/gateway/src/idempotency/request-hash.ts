import { createHash } from 'node:crypto';
import type { Request } from 'express';

/**
 * What a stored request is compared by: method, path and body. A JSON body counts as parsed
 * JSON (whitespace and key order do not matter), as Stripe compares parameters; any other body
 * counts byte for byte. The two cannot collide: canonical JSON always parses, a raw body never.
 */
export function requestHash(req: Request, body: Buffer): string {
  return createHash('sha256').update(`${req.method} ${req.originalUrl}\n`).update(canonicalBody(body)).digest('hex');
}

function canonicalBody(body: Buffer): Buffer | string {
  try {
    return canonicalJson(JSON.parse(body.toString('utf8')));
  } catch {
    return body;
  }
}

/** JSON with every object's keys sorted, recursively. Written out directly, so `__proto__` stays a plain key. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  const entries = Object.keys(value)
    .sort()
    .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`);
  return `{${entries.join(',')}}`;
}
