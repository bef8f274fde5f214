import { createCipheriv, createDecipheriv } from 'node:crypto';
import type { EcpayEinvoiceKeys } from './merchant';

/**
 * The v3 envelope of ECPay's B2C e-invoice API (附錄 / 參數加密方式說明, ?p=7958; ECPay/SDK_PHP
 * `src/Services/AesService.php`):
 *
 * - Data = base64( AES-128-CBC( urlencode( JSON of the fields ) ) ), PKCS7 padding, the HashKey's
 *   16 bytes the key and the HashIV's 16 bytes the IV;
 * - urlencode is PHP's `urlencode` (what ECPay's PHP SDK calls): letters, digits and `-_.` stay,
 *   a space is `+`, every other UTF-8 byte is `%XX` in upper case. The document prints its example
 *   in upper and lower case and ECPay decrypts either; the upper-case form is the one its
 *   vectors and its 電子發票示範 (?p=19021) use, so it is the one pinned here;
 * - a request is `{ MerchantID, RqHeader: { Timestamp }, Data }` (Timestamp in unix seconds, checked
 *   by ECPay within 10 minutes), an answer `{ PlatformID, MerchantID, RpHeader, TransCode,
 *   TransMsg, Data }` whose Data is encrypted the same way and holds RtnCode and RtnMsg.
 */
export type EcpayEinvoiceRequest = {
  MerchantID: string;
  RqHeader: { Timestamp: number };
  Data: string;
};

/** Data that is not ECPay's for these keys: not base64, a padding that does not check, not url-encoded JSON. */
export class EcpayCipherError extends Error {}

function keyAndIv(keys: EcpayEinvoiceKeys): { key: Buffer; iv: Buffer } {
  const key = Buffer.from(keys.hashKey, 'utf8');
  const iv = Buffer.from(keys.hashIV, 'utf8');
  // PHP's openssl would pad or cut other lengths silently; a wrong key is refused here instead.
  if (key.length !== 16) throw new RangeError('An ECPay e-invoice HashKey is 16 bytes');
  if (iv.length !== 16) throw new RangeError('An ECPay e-invoice HashIV is 16 bytes');
  return { key, iv };
}

const UNRESERVED = /[A-Za-z0-9\-_.]/;

/** PHP's `urlencode`: RFC 1738, a space as `+`, only letters, digits and `-_.` left as they are. */
export function phpUrlEncode(text: string): string {
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    const char = String.fromCharCode(byte);
    if (byte < 0x80 && UNRESERVED.test(char)) out += char;
    else if (byte === 0x20) out += '+';
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * PHP's `urldecode` (what the SDK runs on an answer): `+` is a space, `%XX` a byte in either
 * case, anything else itself; the bytes must then be UTF-8.
 */
export function phpUrlDecode(text: string | Buffer): string {
  const input = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  const out = Buffer.alloc(input.length);
  let length = 0;
  const hex = (byte: number | undefined) =>
    byte !== undefined &&
    ((byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66));
  for (let at = 0; at < input.length; at++) {
    const byte = input[at]!;
    if (byte === 0x2b) out[length++] = 0x20;
    else if (byte === 0x25 && hex(input[at + 1]) && hex(input[at + 2])) {
      out[length++] = Number.parseInt(input.subarray(at + 1, at + 3).toString('latin1'), 16);
      at += 2;
    } else out[length++] = byte;
  }
  try {
    return fatalUtf8.decode(out.subarray(0, length));
  } catch {
    throw new EcpayCipherError('Data does not url-decode to UTF-8');
  }
}

/** Data for `fields`: base64 of AES-128-CBC of PHP-urlencoded JSON. */
export function encryptData(fields: unknown, keys: EcpayEinvoiceKeys): string {
  return encryptText(phpUrlEncode(JSON.stringify(fields)), keys);
}

/** base64 of AES-128-CBC (PKCS7) of `plain` as it is: the step after url-encoding. */
export function encryptText(plain: string, keys: EcpayEinvoiceKeys): string {
  const { key, iv } = keyAndIv(keys);
  const cipher = createCipheriv('aes-128-cbc', key, iv);
  return Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
}

/** The url-encoded text inside Data, before url-decoding; throws `EcpayCipherError`. */
export function decryptText(data: string, keys: EcpayEinvoiceKeys): Buffer {
  const { key, iv } = keyAndIv(keys);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data) || data.length % 4 !== 0) throw new EcpayCipherError('Data is not base64');
  const encrypted = Buffer.from(data, 'base64');
  if (encrypted.length === 0 || encrypted.length % 16 !== 0) {
    throw new EcpayCipherError('Data is not a whole number of AES blocks');
  }
  const decipher = createDecipheriv('aes-128-cbc', key, iv);
  try {
    return Buffer.concat([decipher.update(encrypted), decipher.final()]);
  } catch {
    throw new EcpayCipherError('Data does not decrypt under these keys (its padding does not check)');
  }
}

/** The fields inside Data: decrypted, url-decoded and parsed as a JSON object; throws `EcpayCipherError`. */
export function decryptData(data: string, keys: EcpayEinvoiceKeys): Record<string, unknown> {
  const json = phpUrlDecode(decryptText(data, keys));
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new EcpayCipherError('Data does not decrypt to JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new EcpayCipherError('Data does not decrypt to a JSON object');
  }
  return parsed as Record<string, unknown>;
}

/** The request body carrying `fields` for the merchant at `now`. */
export function sealRequest(
  merchant: EcpayEinvoiceKeys & { merchantId: string },
  fields: unknown,
  now: Date,
): EcpayEinvoiceRequest {
  return {
    MerchantID: merchant.merchantId,
    RqHeader: { Timestamp: Math.floor(now.getTime() / 1000) },
    Data: encryptData(fields, merchant),
  };
}
