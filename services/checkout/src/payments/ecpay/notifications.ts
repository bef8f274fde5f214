import { hasValidCheckMac } from './check-mac';
import { type EcpayMerchant, parseEcpayDateTime } from './merchant';

/** What ECPay must read back from a notification it may stop resending: anything else, and it sends again. */
export const NOTIFICATION_RECEIVED = '1|OK';

/**
 * A server-to-server post from ECPay, checked and read:
 * - `paid` / `failed`: the result of a trade (ReturnURL, 付款結果通知; RtnCode 1 is paid);
 * - `atm_issued` / `cvs_issued`: the account or code the buyer will pay into, with its deadline
 *   (PaymentInfoURL, 取號結果通知; RtnCode 2 for ATM and 10100073 for CVS), or `issue_failed`.
 */
export type EcpayNotification =
  | {
      kind: 'paid';
      tradeNo: string;
      ecpayTradeNo: string;
      amount: number;
      paidAt: Date | null;
      simulated: boolean;
      /** How the buyer paid, as ECPay names it: `Credit_CreditCard`, `ATM_<bank>`, `CVS_<store>`, … */
      paymentType: string;
    }
  | { kind: 'failed'; tradeNo: string; ecpayTradeNo: string; code: string; message: string }
  | {
      kind: 'atm_issued';
      tradeNo: string;
      ecpayTradeNo: string;
      amount: number;
      bankCode: string;
      account: string;
      expiresAt: Date;
    }
  | { kind: 'cvs_issued'; tradeNo: string; ecpayTradeNo: string; amount: number; paymentNo: string; expiresAt: Date }
  | { kind: 'issue_failed'; tradeNo: string; ecpayTradeNo: string; code: string; message: string };

/** A post that is not ECPay's for this merchant: answered 400, never acted on. */
export class RejectedNotification extends Error {}

const text = (body: Record<string, unknown>, name: string) => (typeof body[name] === 'string' ? body[name] : '');

/** Checks the CheckMacValue and the merchant, then reads the post; throws `RejectedNotification` otherwise. */
export function readNotification(body: Record<string, unknown>, merchant: EcpayMerchant): EcpayNotification {
  const fields = Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'string')) as Record<
    string,
    string
  >;
  if (!hasValidCheckMac(fields, merchant)) throw new RejectedNotification('CheckMacValue does not match');
  if (fields.MerchantID !== merchant.merchantId) throw new RejectedNotification('Another merchant');
  const tradeNo = text(fields, 'MerchantTradeNo');
  const ecpayTradeNo = text(fields, 'TradeNo');
  const code = text(fields, 'RtnCode');
  const message = text(fields, 'RtnMsg');
  const amount = Number(text(fields, 'TradeAmt'));
  if (!tradeNo || !code) throw new RejectedNotification('No MerchantTradeNo or RtnCode');
  if ('vAccount' in fields || 'PaymentNo' in fields || 'BankCode' in fields) {
    return paymentInfo(fields, { tradeNo, ecpayTradeNo, code, message, amount });
  }
  if (code === '1') {
    return {
      kind: 'paid',
      tradeNo,
      ecpayTradeNo,
      amount,
      paidAt: parseEcpayDateTime(text(fields, 'PaymentDate')),
      simulated: text(fields, 'SimulatePaid') === '1',
      paymentType: text(fields, 'PaymentType'),
    };
  }
  return { kind: 'failed', tradeNo, ecpayTradeNo, code, message };
}

function paymentInfo(
  fields: Record<string, string>,
  trade: { tradeNo: string; ecpayTradeNo: string; code: string; message: string; amount: number },
): EcpayNotification {
  const { tradeNo, ecpayTradeNo, code, message, amount } = trade;
  const expiresAt = parseEcpayDateTime(text(fields, 'ExpireDate'));
  if (code === '2' && fields.vAccount && expiresAt) {
    // An ATM deadline is a date: the account takes transfers until that day ends in Taiwan.
    const endOfDay = /^\d{4}\/\d{2}\/\d{2}$/.test(fields.ExpireDate!.trim())
      ? new Date(expiresAt.getTime() + 86_400_000 - 1000)
      : expiresAt;
    return {
      kind: 'atm_issued',
      tradeNo,
      ecpayTradeNo,
      amount,
      bankCode: text(fields, 'BankCode'),
      account: fields.vAccount,
      expiresAt: endOfDay,
    };
  }
  if (code === '10100073' && fields.PaymentNo && expiresAt) {
    return { kind: 'cvs_issued', tradeNo, ecpayTradeNo, amount, paymentNo: fields.PaymentNo, expiresAt };
  }
  return { kind: 'issue_failed', tradeNo, ecpayTradeNo, code, message };
}
