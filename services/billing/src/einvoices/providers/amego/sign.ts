import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Amego's request signature (invoice.amego.tw/api_doc/example, "md5(發票資料+時間戳記+APP KEY)"):
 * the MD5 of the `data` field exactly as posted (a JSON string), then `time` (unix seconds, as
 * posted), then the App Key, UTF-8, in lower-case hex. The string signed must be the string sent:
 * another serialisation of the same object (spacing, key order, `\u` escapes) signs differently.
 */
export function amegoSign(data: string, time: string | number, appKey: string): string {
  return createHash('md5').update(`${data}${time}${appKey}`, 'utf8').digest('hex');
}

/** What every Amego call posts, as `application/x-www-form-urlencoded`. */
export type AmegoForm = { invoice: string; data: string; time: string; sign: string };

/**
 * The form of one call: the seller's 統一編號 as `invoice`, `data` serialised once (JSON.stringify,
 * which leaves non-ASCII unescaped as Amego's PHP example does) and signed as sent, `time` in unix
 * seconds (Amego refuses a time more than 60 s from its clock, code 15).
 */
export function amegoForm(seller: { sellerTaxId: string; appKey: string }, data: unknown, now: Date): AmegoForm {
  const json = JSON.stringify(data);
  const time = String(Math.floor(now.getTime() / 1000));
  return { invoice: seller.sellerTaxId, data: json, time, sign: amegoSign(json, time, seller.appKey) };
}

/** Whether a posted form carries the signature its data, time and the App Key give (compared in constant time). */
export function hasValidAmegoSign(form: Record<string, string | undefined>, appKey: string): boolean {
  const { data, time, sign } = form;
  if (data === undefined || time === undefined || typeof sign !== 'string' || !/^[0-9a-fA-F]{32}$/.test(sign)) {
    return false;
  }
  return timingSafeEqual(Buffer.from(amegoSign(data, time, appKey), 'utf8'), Buffer.from(sign.toLowerCase(), 'utf8'));
}
