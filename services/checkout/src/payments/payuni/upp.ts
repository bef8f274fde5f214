import { createHash } from 'node:crypto';
import { type PayuniEnvelope, seal } from './crypto';
import { PAYUNI_PATHS, type PayuniMerchant, payuniDate } from './merchant';

/** The UPP methods the platform offers: a card, an ATM virtual account, a convenience-store code. */
export type PayuniMethod = 'Credit' | 'ATM' | 'CVS';

export interface UppOrder {
  /** The platform's charge key: one PAYUNi trade per key (`payuniTradeNo`). */
  idempotencyKey: string;
  /** Integer TWD, more than 0. */
  amount: number;
  method: PayuniMethod;
  /** ProdDesc: what the buyer sees on PAYUNi's page. */
  description: string;
  now: Date;
  /** Where PAYUNi posts results server to server (付款結果通知; ATM and CVS: the code issued, then the payment). */
  notifyUrl: string;
  /** Where the buyer's browser posts the result back (its post is not to be trusted alone). */
  returnUrl?: string;
  /** Where PAYUNi's "back to the shop" link goes. */
  backUrl?: string;
  /** The buyer's email, shown on PAYUNi's page. */
  email?: string;
  /** ATM and CVS: days to pay, 1-180 (the official WooCommerce plugin's range and default 7). */
  expireDays?: number;
  lang?: 'zh-tw' | 'en';
}

/** What the buyer's browser posts to PAYUNi's UPP: the form's action and its four fields. */
export interface UppForm {
  action: string;
  fields: PayuniEnvelope;
  /** The fields inside EncryptInfo, kept for logs and tests (never sent in the clear). */
  encrypted: Record<string, string>;
}

/**
 * PAYUNi's MerTradeNo is at most 25 of `A-Za-z0-9_-` and new for every trade: the first 20
 * base-36 digits of the key's SHA-256, so a retry of one key names the same trade.
 */
export function payuniTradeNo(idempotencyKey: string): string {
  const digest = BigInt(`0x${createHash('sha256').update(idempotencyKey).digest('hex')}`);
  return digest.toString(36).toUpperCase().padStart(20, '0').slice(0, 20);
}

/** The UPP (整合式支付頁) form of one order, limited to one method. Throws on an order PAYUNi would refuse. */
export function uppForm(merchant: PayuniMerchant, order: UppOrder): UppForm {
  if (!Number.isSafeInteger(order.amount) || order.amount <= 0) {
    throw new RangeError(`A PAYUNi trade is a positive integer of TWD, not ${order.amount}`);
  }
  const encrypted: Record<string, string> = {
    MerID: merchant.merchantId,
    MerTradeNo: payuniTradeNo(order.idempotencyKey),
    TradeAmt: String(order.amount),
    Timestamp: String(Math.floor(order.now.getTime() / 1000)),
    ProdDesc: order.description.slice(0, 200),
    NotifyURL: order.notifyUrl,
    ...(order.returnUrl ? { ReturnURL: order.returnUrl } : {}),
    ...(order.backUrl ? { BackURL: order.backUrl } : {}),
    ...(order.email ? { UsrMail: order.email } : {}),
    ...(order.lang ? { Lang: order.lang } : {}),
    // Only the chosen method is switched on (the plugins send each enabled method as `<Name>=1`).
    [order.method]: '1',
  };
  if (order.method !== 'Credit') {
    const days = order.expireDays ?? 7;
    if (!Number.isInteger(days) || days < 1 || days > 180)
      throw new RangeError('ATM and CVS codes stay open 1-180 days');
    encrypted.ExpireDate = payuniDate(new Date(order.now.getTime() + days * 86_400_000));
  }
  return {
    action: `${merchant.baseUrl}${PAYUNI_PATHS.upp}`,
    fields: seal(merchant.merchantId, encrypted, merchant),
    encrypted,
  };
}
