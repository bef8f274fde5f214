import { createHmac } from 'node:crypto';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

/** Decoded keys of recently used secrets: a burst signs many deliveries with one secret. */
const keys = new Map<string, Buffer>();
const MAX_KEYS = 1024;

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (key) return key;
  key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  if (keys.size >= MAX_KEYS) keys.clear();
  keys.set(secret, key);
  return key;
}

/**
 * Standard Webhooks: `v1,` and the base64 HMAC-SHA256 of `<id>.<timestamp>.<body>`, keyed with
 * the base64-decoded part of the secret after `whsec_`. `timestamp` is in seconds.
 */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): SignedHeaders {
  const signature = createHmac('sha256', keyOf(secret))
    .update(`${id}.${timestampSeconds}.`)
    .update(body)
    .digest('base64');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': `v1,${signature}`,
  };
}
