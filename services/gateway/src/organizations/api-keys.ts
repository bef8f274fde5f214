import { createHash } from 'node:crypto';
import { type Environment, type KeyKind, newId, randomBase62 } from '@billing/contracts';

const PREFIX: Record<KeyKind, Record<Environment, string>> = {
  secret: { SANDBOX: 'sk_test_', PRODUCTION: 'sk_live_' },
  publishable: { SANDBOX: 'pk_test_', PRODUCTION: 'pk_live_' },
};

/** A key as issued: the plaintext is shown once; only its hash is stored. */
export interface IssuedKey {
  keyId: string;
  environment: Environment;
  kind: KeyKind;
  plaintext: string;
  hash: string;
  last4: string;
}

/**
 * Keys carry 32 random base62 characters (about 190 bits), so a fast SHA-256 is enough to
 * store them: unlike passwords they cannot be guessed from a dictionary.
 */
export function hashApiKey(plaintext: string): string {
  return createHash('sha256').update(plaintext).digest('hex');
}

export function issueKey(environment: Environment, kind: KeyKind): IssuedKey {
  const plaintext = `${PREFIX[kind][environment]}${randomBase62(32)}`;
  return {
    keyId: newId('apiKey'),
    environment,
    kind,
    plaintext,
    hash: hashApiKey(plaintext),
    last4: plaintext.slice(-4),
  };
}

export function issueAllKeys(): IssuedKey[] {
  return (['SANDBOX', 'PRODUCTION'] as const).flatMap((env) => [issueKey(env, 'secret'), issueKey(env, 'publishable')]);
}

/** What a key's prefix says about it, or undefined when it is not one of ours. */
export function describeKey(plaintext: string): { environment: Environment; kind: KeyKind } | undefined {
  for (const kind of ['secret', 'publishable'] as const) {
    for (const environment of ['SANDBOX', 'PRODUCTION'] as const) {
      const prefix = PREFIX[kind][environment];
      if (plaintext.startsWith(prefix) && /^[0-9A-Za-z]{32}$/.test(plaintext.slice(prefix.length))) {
        return { environment, kind };
      }
    }
  }
  return undefined;
}
