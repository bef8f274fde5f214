import { createHash, timingSafeEqual } from 'node:crypto';

/** A merchant's AIO keys, issued by ECPay with its merchant id. */
export interface EcpayKeys {
  hashKey: string;
  hashIV: string;
}

/**
 * URL encoding as ECPay computes it (.NET's `HttpUtility.UrlEncode`, its "URLENCODE 轉換表"):
 * a space is `+`, `~` and `'` are escaped, and `- _ . ! * ( )` are not. encodeURIComponent
 * differs from it only in those three.
 */
export function ecpayUrlEncode(text: string): string {
  return encodeURIComponent(text).replace(/%20/g, '+').replace(/~/g, '%7E').replace(/'/g, '%27');
}

/**
 * ECPay's CheckMacValue (全方位金流 附錄 / 檢查碼機制, developers.ecpay.com.tw/?p=2902): every
 * parameter but CheckMacValue, sorted by name A to Z, joined as `k=v&...`, between
 * `HashKey=...&` and `&HashIV=...`, URL-encoded the .NET way, lower-cased, hashed (SHA-256 for
 * payments, `EncryptType=1`; MD5 for some e-invoice APIs), upper-cased.
 */
export function checkMacValue(
  params: Record<string, string>,
  keys: EcpayKeys,
  algorithm: 'sha256' | 'md5' = 'sha256',
): string {
  const names = Object.keys(params)
    .filter((name) => name !== 'CheckMacValue')
    .sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0));
  const joined = names.map((name) => `${name}=${params[name]}`).join('&');
  const raw = `HashKey=${keys.hashKey}&${joined}&HashIV=${keys.hashIV}`;
  return createHash(algorithm).update(ecpayUrlEncode(raw).toLowerCase()).digest('hex').toUpperCase();
}

/** Whether `params` carry the CheckMacValue the keys give them (compared in constant time). */
export function hasValidCheckMac(params: Record<string, string>, keys: EcpayKeys): boolean {
  const given = params.CheckMacValue;
  if (typeof given !== 'string' || !/^[0-9A-Fa-f]{64}$/.test(given)) return false;
  const expected = Buffer.from(checkMacValue(params, keys), 'utf8');
  return timingSafeEqual(expected, Buffer.from(given.toUpperCase(), 'utf8'));
}
