/** A merchant's PAYUNi keys, shown in PAYUNi's merchant site under the shop's 串接設定. */
export interface PayuniKeys {
  /** 32 characters: the AES-256 key, and the start of every HashInfo. */
  hashKey: string;
  /** 16 characters: the GCM IV, and the end of every HashInfo. */
  hashIV: string;
}

/** A PAYUNi merchant account: its MerID, its keys and where its API answers. */
export interface PayuniMerchant extends PayuniKeys {
  merchantId: string;
  /** `https://api.payuni.com.tw`, `https://sandbox-api.payuni.com.tw`, or an emulator's address. */
  baseUrl: string;
}

export const PAYUNI_PRODUCTION_URL = 'https://api.payuni.com.tw';
export const PAYUNI_SANDBOX_URL = 'https://sandbox-api.payuni.com.tw';

/** The paths PAYUNi's SDKs and plugins post to, under `baseUrl`. */
export const PAYUNI_PATHS = {
  upp: '/api/upp',
  tradeQuery: '/api/trade/query',
  /** UNi Embed: an SDK token for PAYUNi's card fields (`uni-payment.js`). */
  sdkToken: '/api/iframe/token_get',
  /** UNi Embed: charges the card bound to an SDK token. */
  embedTrade: '/api/iframe/merchant_trade',
  /** 幕後授權: charges a saved card by CreditToken and CreditHash, without the buyer. */
  credit: '/api/credit',
  /** 交易請退款: CloseType 2 refunds a captured card trade, whole or in part, by PAYUNi's TradeNo. */
  tradeClose: '/api/trade/close',
  /** 交易取消授權: cancels a card trade's authorisation, whole, while its capture is requested. */
  tradeCancel: '/api/trade/cancel',
  /** 虛擬帳號幕後: an ATM virtual account issued server to server, without PAYUNi's page. */
  atm: '/api/atm',
  /** 超商代碼幕後: a convenience-store payment code issued server to server. */
  cvs: '/api/cvs',
} as const;

/** A Taiwan-time calendar day, `YYYY-MM-DD` (the UPP ExpireDate). */
export function payuniDate(instant: Date): string {
  return new Date(instant.getTime() + 8 * 3600_000).toISOString().slice(0, 10);
}

/** A Taiwan-time `YYYY-MM-DD HH:II:SS`, as PAYUNi writes ExpireDate and PayTime. */
export function payuniDateTime(instant: Date): string {
  const taipei = new Date(instant.getTime() + 8 * 3600_000).toISOString();
  return `${taipei.slice(0, 10)} ${taipei.slice(11, 19)}`;
}

/**
 * The instant of a PAYUNi date, Taiwan time: `YYYY-MM-DD HH:II:SS`, `YYYY-MM-DD`, or the card
 * result's AuthDay + AuthTime (`YYYYMMDD`, `HHIISS`); null when it is none of these.
 */
export function parsePayuniDateTime(text: string, time = ''): Date | null {
  const joined = `${text.trim()}${time.trim() ? ` ${time.trim()}` : ''}`;
  const match =
    /^(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(joined) ??
    /^(\d{4})(\d{2})(\d{2})(?: (\d{2})(\d{2})(\d{2}))?$/.exec(joined);
  if (!match) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00'] = match;
  const instant = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}+08:00`);
  return Number.isNaN(instant.getTime()) ? null : instant;
}
