import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/**
 * A provider's credentials (a payment processor's, an e-invoice provider's) are kept sealed with
 * AES-256-GCM under a key from the environment: the purpose's variable (32 bytes, base64), or,
 * when it is not set, a key derived from INTERNAL_SECRET (HKDF-SHA256, the purpose as info), so
 * that a deployment without it still never stores them in the clear. A sealed value names the key it was sealed with (the first 8 hex digits of the
 * key's SHA-256), so a value sealed under another key is refused clearly, not read as garbage.
 */
export interface CredentialsKey {
  key: Buffer;
  id: string;
}

/** Which credentials a key seals: the variable that may hold it, and the derivation's info. */
export type CredentialsPurpose = { variable: string; info: string };
export const PROCESSOR_CREDENTIALS: CredentialsPurpose = {
  variable: 'PROCESSOR_CREDENTIALS_KEY',
  info: 'processor-credentials',
};
export const EINVOICE_CREDENTIALS: CredentialsPurpose = {
  variable: 'EINVOICE_CREDENTIALS_KEY',
  info: 'einvoice-credentials',
};

export function credentialsKeyOf(
  config: Record<string, string | undefined>,
  internalSecret: string,
  purpose: CredentialsPurpose = PROCESSOR_CREDENTIALS,
): CredentialsKey {
  const given = config[purpose.variable];
  let key: Buffer;
  if (given) {
    key = Buffer.from(given, 'base64');
    if (key.length !== 32) throw new Error(`${purpose.variable} must be 32 bytes, base64-encoded`);
  } else {
    key = Buffer.from(hkdfSync('sha256', internalSecret, 'billing', purpose.info, 32));
  }
  return { key, id: createHash('sha256').update(key).digest('hex').slice(0, 8) };
}

/** `v1.<key id>.<iv>.<tag>.<ciphertext>`, base64url parts. */
export function sealCredentials(credentials: Record<string, string>, key: CredentialsKey): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.key, iv);
  cipher.setAAD(Buffer.from(key.id));
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
  const parts = [iv, cipher.getAuthTag(), ciphertext].map((part) => part.toString('base64url'));
  return ['v1', key.id, ...parts].join('.');
}

export class CredentialsUnreadable extends Error {}

export function openCredentials(sealed: string, key: CredentialsKey): Record<string, string> {
  const [version, keyId, iv, tag, ciphertext] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || ciphertext === undefined)
    throw new CredentialsUnreadable('Not sealed credentials');
  if (keyId !== key.id) {
    throw new CredentialsUnreadable(
      `Sealed under another key (${keyId}); this deployment's is ${key.id}: enter them again`,
    );
  }
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(key.id));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const plain = Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]);
    return JSON.parse(plain.toString('utf8')) as Record<string, string>;
  } catch {
    throw new CredentialsUnreadable('Sealed credentials do not open: altered, or sealed under another key');
  }
}
