import type { EcpayKeys } from './check-mac';

/** An ECPay merchant account: its id, its AIO keys and where its API answers. */
export interface EcpayMerchant extends EcpayKeys {
  merchantId: string;
  /** `https://payment.ecpay.com.tw`, `https://payment-stage.ecpay.com.tw`, or an emulator's address. */
  baseUrl: string;
}

export const ECPAY_PRODUCTION_URL = 'https://payment.ecpay.com.tw';
export const ECPAY_STAGING_URL = 'https://payment-stage.ecpay.com.tw';

/**
 * ECPay's public staging merchant, printed in its documents (全方位金流 測試環境): usable by
 * anyone against `payment-stage`, never against production.
 */
export const ECPAY_STAGING_MERCHANT: EcpayMerchant = {
  merchantId: '3002607',
  hashKey: 'pwFHCqoQZGmho4w6',
  hashIV: 'EkRm7iFT261dpevs',
  baseUrl: ECPAY_STAGING_URL,
};

/** ECPay's dates are Taiwan time, `yyyy/MM/dd HH:mm:ss`. */
export function ecpayDateTime(instant: Date): string {
  const taipei = new Date(instant.getTime() + 8 * 3600_000).toISOString();
  return `${taipei.slice(0, 10).replaceAll('-', '/')} ${taipei.slice(11, 19)}`;
}

/** The instant of an ECPay date (`yyyy/MM/dd` or `yyyy/MM/dd HH:mm[:ss]`, Taiwan time), or null. */
export function parseEcpayDateTime(text: string): Date | null {
  const match = /^(\d{4})\/(\d{2})\/(\d{2})(?: (\d{2}):(\d{2})(?::(\d{2}))?)?$/.exec(text.trim());
  if (!match) return null;
  const [, y, mo, d, h = '00', mi = '00', s = '00'] = match;
  const instant = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}+08:00`);
  return Number.isNaN(instant.getTime()) ? null : instant;
}
