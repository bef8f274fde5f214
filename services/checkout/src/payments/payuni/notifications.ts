import { PayuniCipherError, open } from './crypto';
import { type PayuniMerchant, parsePayuniDateTime } from './merchant';

/**
 * A post from PAYUNi (NotifyURL server to server, or the buyer's browser at ReturnURL, which
 * carries the same envelope), checked and read. Inside EncryptInfo: Status, Message, MerID,
 * MerTradeNo, TradeNo (UNi序號), TradeAmt, TradeStatus (0 code issued, 1 paid, 2 failed,
 * 3 cancelled, 4 expired, 8 to be confirmed), PaymentType (1 card, 2 ATM, 3 CVS), and per method
 * BankType/PayNo/ExpireDate (ATM), Store/PayNo/ExpireDate (CVS), AuthDay/AuthTime (card).
 */
export type PayuniNotification =
  | { kind: 'paid'; tradeNo: string; payuniTradeNo: string; amount: number; paymentType: string; paidAt: Date | null }
  | { kind: 'failed'; tradeNo: string; payuniTradeNo: string; status: string; tradeStatus: string; message: string }
  | {
      kind: 'atm_issued';
      tradeNo: string;
      payuniTradeNo: string;
      amount: number;
      bankCode: string;
      account: string;
      expiresAt: Date;
    }
  | {
      kind: 'cvs_issued';
      tradeNo: string;
      payuniTradeNo: string;
      amount: number;
      store: string;
      paymentNo: string;
      expiresAt: Date;
    }
  /** PAYUNi does not know yet (Status UNKNOWN: no bank answer in 60 s; TradeStatus 8): ask the trade query later. */
  | { kind: 'pending'; tradeNo: string; payuniTradeNo: string; status: string; message: string };

/** A post that is not PAYUNi's for this merchant: answered 400, never acted on. */
export class RejectedNotification extends Error {}

/**
 * What the merchant answers a notification it has recorded. PAYUNi's documents, as far as they
 * were found, do not say what body stops its resending; its own WooCommerce plugin answers an
 * empty HTTP 200. The emulator takes any 2xx as acknowledged.
 */
export const NOTIFICATION_RECEIVED = 'OK';

/**
 * The fields inside a post from PAYUNi, once its HashInfo, GCM tag, merchant (outside and inside)
 * and MerTradeNo check out; throws `RejectedNotification` otherwise. `readNotification` reads them
 * for every method; `readCardNotification` (embed.ts) reads a card's, with the card saved.
 */
export function openNotification(body: Record<string, unknown>, merchant: PayuniMerchant): Record<string, string> {
  let info: Record<string, string>;
  try {
    info = open(body, merchant);
  } catch (error) {
    if (error instanceof PayuniCipherError) throw new RejectedNotification(error.message);
    throw error;
  }
  if (body.MerID !== merchant.merchantId || info.MerID !== merchant.merchantId) {
    throw new RejectedNotification('Another merchant');
  }
  if (!info.MerTradeNo) throw new RejectedNotification('No MerTradeNo');
  return info;
}

/** Checks the HashInfo, the GCM tag and the merchant, then reads the post; throws `RejectedNotification` otherwise. */
export function readNotification(body: Record<string, unknown>, merchant: PayuniMerchant): PayuniNotification {
  const info = openNotification(body, merchant);
  const tradeNo = info.MerTradeNo ?? '';
  const payuniTradeNo = info.TradeNo ?? '';
  const status = info.Status ?? (typeof body.Status === 'string' ? body.Status : '');
  const tradeStatus = info.TradeStatus ?? '';
  const message = info.Message ?? '';
  const amount = Number(info.TradeAmt ?? NaN);
  const common = { tradeNo, payuniTradeNo };

  if (status.toUpperCase() === 'UNKNOWN' || tradeStatus === '8' || (status === 'SUCCESS' && !tradeStatus)) {
    return { kind: 'pending', ...common, status, message };
  }
  if (tradeStatus === '1' && status === 'SUCCESS') {
    const paidAt =
      info.PaymentType === '1'
        ? parsePayuniDateTime(info.AuthDay ?? '', info.AuthTime ?? '')
        : parsePayuniDateTime(info.PayTime ?? '');
    return { kind: 'paid', ...common, amount, paymentType: info.PaymentType ?? '', paidAt };
  }
  if (tradeStatus === '0' && status === 'SUCCESS') {
    const expiresAt = parsePayuniDateTime(info.ExpireDate ?? '');
    if (info.PaymentType === '2' && info.PayNo && expiresAt) {
      return { kind: 'atm_issued', ...common, amount, bankCode: info.BankType ?? '', account: info.PayNo, expiresAt };
    }
    if (info.PaymentType === '3' && info.PayNo && expiresAt) {
      return { kind: 'cvs_issued', ...common, amount, store: info.Store ?? '', paymentNo: info.PayNo, expiresAt };
    }
    return { kind: 'pending', ...common, status, message };
  }
  return { kind: 'failed', ...common, status, tradeStatus, message };
}
