import { createCipheriv, createDecipheriv, createHash, timingSafeEqual } from 'node:crypto';
import type { PayuniKeys } from './merchant';

/**
 * PAYUNi's envelope, as its own SDKs compute it (payuni/PHP_SDK `src/PayuniApi.php` Encrypt,
 * Decrypt and HashInfo; payuni/NET_SDK `payuniAPI.cs` the same in C#):
 *
 * - the fields are written as a query string (PHP's `http_build_query`),
 * - encrypted with AES-256-GCM, the HashKey's 32 bytes the key and the HashIV's 16 bytes the IV,
 *   a 16-byte tag,
 * - EncryptInfo = hex( base64(ciphertext) + ":::" + base64(tag) ), lower case,
 * - HashInfo = upper-case hex SHA-256 of HashKey + EncryptInfo + HashIV.
 *
 * Every post to PAYUNi and every answer or notification from it is
 * `{ MerID, Version, EncryptInfo, HashInfo }` (answers and notifications add `Status`).
 */
export type PayuniEnvelope = {
  MerID: string;
  Version: string;
  EncryptInfo: string;
  HashInfo: string;
};

/** EncryptInfo that is not PAYUNi's for these keys: malformed, or its GCM tag does not verify. */
export class PayuniCipherError extends Error {}

const TAG_BYTES = 16;

function keyAndIv(keys: PayuniKeys): { key: Buffer; iv: Buffer } {
  const key = Buffer.from(keys.hashKey, 'utf8');
  const iv = Buffer.from(keys.hashIV, 'utf8');
  // PHP's openssl would pad or cut other lengths silently; a wrong key is refused here instead.
  if (key.length !== 32) throw new RangeError('A PAYUNi HashKey is 32 bytes');
  if (iv.length !== 16) throw new RangeError('A PAYUNi HashIV is 16 bytes');
  return { key, iv };
}

/**
 * A query string as PHP's `http_build_query` writes one (RFC 1738: a space is `+`, and only
 * letters, digits and `-_.` are left as they are), so that the ciphertext is byte for byte what
 * PAYUNi's PHP SDK would send.
 */
export function phpQueryString(fields: Record<string, string>): string {
  const encode = (text: string) =>
    encodeURIComponent(text)
      .replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
      .replace(/%20/g, '+');
  return Object.entries(fields)
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .join('&');
}

/** EncryptInfo of `fields`. */
export function encryptInfo(fields: Record<string, string>, keys: PayuniKeys): string {
  const { key, iv } = keyAndIv(keys);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(phpQueryString(fields), 'utf8'), cipher.final()]);
  const joined = `${ciphertext.toString('base64')}:::${cipher.getAuthTag().toString('base64')}`;
  return Buffer.from(joined, 'utf8').toString('hex');
}

/** The fields inside EncryptInfo; throws `PayuniCipherError` if it is malformed or was changed. */
export function decryptInfo(encrypted: string, keys: PayuniKeys): Record<string, string> {
  const { key, iv } = keyAndIv(keys);
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(encrypted)) throw new PayuniCipherError('EncryptInfo is not hex');
  const joined = Buffer.from(encrypted, 'hex').toString('utf8');
  const at = joined.indexOf(':::');
  if (at < 0) throw new PayuniCipherError('EncryptInfo has no ::: between ciphertext and tag');
  const base64 = /^[A-Za-z0-9+/]*={0,2}$/;
  const [data, tagText] = [joined.slice(0, at), joined.slice(at + 3)];
  if (!base64.test(data) || !base64.test(tagText)) throw new PayuniCipherError('EncryptInfo is not base64');
  const tag = Buffer.from(tagText, 'base64');
  if (tag.length !== TAG_BYTES) throw new PayuniCipherError('EncryptInfo has no 16-byte GCM tag');
  const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  decipher.setAuthTag(tag);
  let plain: string;
  try {
    plain = Buffer.concat([decipher.update(Buffer.from(data, 'base64')), decipher.final()]).toString('utf8');
  } catch {
    throw new PayuniCipherError('EncryptInfo does not decrypt under these keys (GCM tag check failed)');
  }
  return Object.fromEntries(new URLSearchParams(plain));
}

/** HashInfo of an EncryptInfo. */
export function hashInfo(encrypted: string, keys: PayuniKeys): string {
  return createHash('sha256').update(`${keys.hashKey}${encrypted}${keys.hashIV}`, 'utf8').digest('hex').toUpperCase();
}

/** Whether `given` is the HashInfo of `encrypted` under the keys (compared in constant time). */
export function hasValidHashInfo(encrypted: string, given: unknown, keys: PayuniKeys): boolean {
  if (typeof given !== 'string' || !/^[0-9A-Fa-f]{64}$/.test(given)) return false;
  return timingSafeEqual(Buffer.from(hashInfo(encrypted, keys), 'utf8'), Buffer.from(given.toUpperCase(), 'utf8'));
}

/** The four fields of a post to PAYUNi carrying `fields`. */
export function seal(
  merchantId: string,
  fields: Record<string, string>,
  keys: PayuniKeys,
  version = '1.0',
): PayuniEnvelope {
  const encrypted = encryptInfo(fields, keys);
  return { MerID: merchantId, Version: version, EncryptInfo: encrypted, HashInfo: hashInfo(encrypted, keys) };
}

/**
 * The fields inside a post or answer from PAYUNi, after its HashInfo is checked and its GCM tag
 * verified; throws `PayuniCipherError` otherwise. The HashInfo is checked first, so a forged
 * post is refused before anything is decrypted.
 */
export function open(body: Record<string, unknown>, keys: PayuniKeys): Record<string, string> {
  const encrypted = body.EncryptInfo;
  if (typeof encrypted !== 'string' || !encrypted) throw new PayuniCipherError('No EncryptInfo');
  if (!hasValidHashInfo(encrypted, body.HashInfo, keys)) throw new PayuniCipherError('HashInfo does not match');
  return decryptInfo(encrypted, keys);
}
