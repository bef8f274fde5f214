import { createHash } from 'node:crypto';
import { checkMacValue } from './check-mac';
import { type EcpayMerchant, ecpayDateTime } from './merchant';
import { type PeriodSchedule, periodFields } from './period';

/** The AioCheckOut methods the platform offers: a card, an ATM virtual account, a convenience-store code. */
export type EcpayMethod = 'Credit' | 'ATM' | 'CVS';

export interface AioOrder {
  /** The platform's charge key: one ECPay trade per key (`merchantTradeNo`). */
  idempotencyKey: string;
  /** Integer TWD, more than 0. */
  amount: number;
  method: EcpayMethod;
  itemName: string;
  description: string;
  now: Date;
  /** Where ECPay posts the payment result, server to server (answered `1|OK`). */
  returnUrl: string;
  /** Where ECPay posts the ATM account or CVS code it issued (ATM and CVS only). */
  paymentInfoUrl?: string;
  /** Where the buyer's browser is sent back with the result. */
  orderResultUrl?: string;
  /** Where ECPay's "back to the shop" link goes. */
  clientBackUrl?: string;
  /** ATM: days the account stays open, 1-60 (ECPay's default 3). */
  atmExpireDays?: number;
  /** CVS: minutes the code stays valid, 1-43,200 (ECPay's default 10,080, seven days). */
  cvsExpireMinutes?: number;
  /** A card plan (定期定額): ECPay charges `amount` again on this schedule and posts each period to `returnUrl`. */
  period?: { schedule: PeriodSchedule; returnUrl: string };
}

/** What the buyer's browser posts to ECPay: the form's action and its fields, CheckMacValue last. */
export interface AioForm {
  action: string;
  fields: Record<string, string>;
}

/**
 * ECPay's MerchantTradeNo is at most 20 letters and digits and must be new for every trade: the
 * first 20 base-36 digits of the key's SHA-256, so a retry of one key names the same trade and
 * ECPay refuses to open it twice.
 */
export function merchantTradeNo(idempotencyKey: string): string {
  const digest = BigInt(`0x${createHash('sha256').update(idempotencyKey).digest('hex')}`);
  return digest.toString(36).toUpperCase().padStart(20, '0').slice(0, 20);
}

/** The AioCheckOut/V5 form of one order (全方位金流 產生訂單). Throws on an order ECPay would refuse. */
export function aioCheckOutForm(merchant: EcpayMerchant, order: AioOrder): AioForm {
  if (!Number.isSafeInteger(order.amount) || order.amount <= 0) {
    throw new RangeError(`An ECPay trade is a positive integer of TWD, not ${order.amount}`);
  }
  const fields: Record<string, string> = {
    MerchantID: merchant.merchantId,
    MerchantTradeNo: merchantTradeNo(order.idempotencyKey),
    MerchantTradeDate: ecpayDateTime(order.now),
    PaymentType: 'aio',
    TotalAmount: String(order.amount),
    TradeDesc: order.description.slice(0, 200),
    // ECPay cuts item names past 400 characters and reads `#` as a line break between items.
    ItemName: order.itemName.replaceAll('#', ' ').slice(0, 400),
    ReturnURL: order.returnUrl,
    ChoosePayment: order.method,
    EncryptType: '1',
    ...(order.orderResultUrl ? { OrderResultURL: order.orderResultUrl } : {}),
    ...(order.clientBackUrl ? { ClientBackURL: order.clientBackUrl } : {}),
    ...methodFields(order),
  };
  return {
    action: `${merchant.baseUrl}/Cashier/AioCheckOut/V5`,
    fields: { ...fields, CheckMacValue: checkMacValue(fields, merchant) },
  };
}

function methodFields(order: AioOrder): Record<string, string> {
  if (order.period) {
    if (order.method !== 'Credit') throw new RangeError('ECPay charges a plan to a card only');
    return periodFields(order.amount, order.period.schedule, order.period.returnUrl);
  }
  const info: Record<string, string> = order.paymentInfoUrl ? { PaymentInfoURL: order.paymentInfoUrl } : {};
  if (order.method === 'ATM') {
    const days = order.atmExpireDays ?? 3;
    if (!Number.isInteger(days) || days < 1 || days > 60) throw new RangeError('ATM accounts stay open 1-60 days');
    return { ...info, ExpireDate: String(days) };
  }
  if (order.method === 'CVS') {
    const minutes = order.cvsExpireMinutes ?? 10_080;
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > 43_200) {
      throw new RangeError('Convenience-store codes stay valid 1-43,200 minutes');
    }
    return { ...info, StoreExpireDate: String(minutes) };
  }
  return {};
}
