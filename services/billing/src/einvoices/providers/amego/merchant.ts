/** A seller's Amego (光貿電子發票) account: its 統一編號, the App Key Amego issued, and where the API answers. */
export interface AmegoMerchant {
  sellerTaxId: string;
  appKey: string;
  /** `https://invoice-api.amego.tw` (test and production alike: the account decides), or an emulator's address. */
  baseUrl: string;
}

/** Amego has one host; the seller's 統一編號 and App Key decide whether it is the test account. */
export const AMEGO_API_URL = 'https://invoice-api.amego.tw';

/**
 * Amego's public test seller, printed in its API examples (invoice.amego.tw/api_doc/example:
 * 統編 12345678, App Key sHeq7t8G1wiQvhAuIM27; back office test@amego.tw): usable by anyone, its
 * invoices are never filed with the tax authority. Never a real seller's.
 */
export const AMEGO_TEST_MERCHANT: AmegoMerchant = {
  sellerTaxId: '12345678',
  appKey: 'sHeq7t8G1wiQvhAuIM27',
  baseUrl: AMEGO_API_URL,
};

const taipei = (instant: Date) => new Date(instant.getTime() + 8 * 3600_000).toISOString();

/** Amego's dates (AllowanceDate, OriginalInvoiceDate, invoice_date) are Taiwan days, `YYYYMMDD`. */
export function amegoDate(instant: Date): string {
  return taipei(instant).slice(0, 10).replaceAll('-', '');
}

/** Amego's times of day (invoice_query's invoice_time) are Taiwan time, `HH:MM:SS`. */
export function amegoTimeOfDay(instant: Date): string {
  return taipei(instant).slice(11, 19);
}

/** The instant of invoice_query's `invoice_date` (YYYYMMDD, a number or a string) and `invoice_time` (HH:MM:SS), Taiwan time; null when either is malformed. */
export function parseAmegoDateTime(date: unknown, time: unknown): Date | null {
  const day = /^(\d{4})(\d{2})(\d{2})$/.exec(String(date ?? ''));
  const clock = /^(\d{2}):(\d{2}):(\d{2})$/.exec(String(time ?? ''));
  if (!day || !clock) return null;
  const instant = new Date(`${day[1]}-${day[2]}-${day[3]}T${clock[1]}:${clock[2]}:${clock[3]}+08:00`);
  return Number.isNaN(instant.getTime()) ? null : instant;
}
