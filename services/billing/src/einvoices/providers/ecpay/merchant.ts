/**
 * ECPay's B2C e-invoice API (B2C電子發票介接技術文件, developers.ecpay.com.tw/?p=7809): where it
 * answers, its public test merchant and the dates it writes. Sources and what each said are in
 * docs/decisions/0021-ecpay-einvoice-client.md.
 */

/** A merchant's e-invoice keys: 16 characters each, the AES-128 key and IV (not the AIO payment keys). */
export interface EcpayEinvoiceKeys {
  hashKey: string;
  hashIV: string;
}

/** An ECPay e-invoice merchant: its MerchantID, its keys and where the API answers. */
export interface EcpayEinvoiceMerchant extends EcpayEinvoiceKeys {
  merchantId: string;
  /** `https://einvoice.ecpay.com.tw`, `https://einvoice-stage.ecpay.com.tw`, or an emulator's address. */
  baseUrl: string;
}

export const ECPAY_EINVOICE_PRODUCTION_URL = 'https://einvoice.ecpay.com.tw';
export const ECPAY_EINVOICE_STAGE_URL = 'https://einvoice-stage.ecpay.com.tw';

/**
 * The public test merchant of ECPay's e-invoice documents and SDKs (測試介接資訊; ECPay/SDK_PHP's
 * example/Invoice/B2C): usable by anyone against `einvoice-stage`, never against production.
 * The document's 電子發票示範 (?p=19021) request decrypts under these keys.
 */
export const ECPAY_EINVOICE_STAGE_MERCHANT: EcpayEinvoiceMerchant = {
  merchantId: '2000132',
  hashKey: 'ejCk326UnaZWKisg',
  hashIV: 'q9jcZX8Ib9LM8wYk',
  baseUrl: ECPAY_EINVOICE_STAGE_URL,
};

/** The endpoints this client and its emulator speak, under `baseUrl`. */
export const ECPAY_EINVOICE_PATHS = {
  /** 一般開立發票 (?p=7896). */
  issue: '/B2CInvoice/Issue',
  /** 查詢發票明細 (?p=7923), by RelateNumber (情境一). */
  getIssue: '/B2CInvoice/GetIssue',
  /** 作廢發票 (?p=7906). */
  invalid: '/B2CInvoice/Invalid',
  /** 一般開立折讓 (紙本開立, ?p=7901). */
  allowance: '/B2CInvoice/Allowance',
  /** 查詢折讓明細 (?p=7928), by invoice number and its issue date (SearchType 1). */
  getAllowanceList: '/B2CInvoice/GetAllowanceList',
} as const;

const TAIPEI_OFFSET_MS = 8 * 3600_000;

/** Taiwan-time `yyyy-MM-dd`: the InvoiceDate ECPay takes to void an invoice or allow against it. */
export function taipeiDate(instant: Date): string {
  return new Date(instant.getTime() + TAIPEI_OFFSET_MS).toISOString().slice(0, 10);
}

/** Taiwan-time `yyyy-MM-dd HH:mm:ss`, as ECPay writes InvoiceDate, IIS_Create_Date and IA_Date. */
export function taipeiDateTime(instant: Date): string {
  const taipei = new Date(instant.getTime() + TAIPEI_OFFSET_MS).toISOString();
  return `${taipei.slice(0, 10)} ${taipei.slice(11, 19)}`;
}

/** The instant of an ECPay date (`yyyy-MM-dd HH:mm:ss` or with `/`, Taiwan time, seconds optional), or null. */
export function parseTaipeiDateTime(text: unknown): Date | null {
  if (typeof text !== 'string') return null;
  const match = /^(\d{4})[-/](\d{2})[-/](\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(text.trim());
  if (!match) return null;
  const [, y, mo, d, h, mi, s = '00'] = match;
  const instant = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}+08:00`);
  return Number.isNaN(instant.getTime()) || taipeiDateTime(instant) !== `${y}-${mo}-${d} ${h}:${mi}:${s}`
    ? null
    : instant;
}
