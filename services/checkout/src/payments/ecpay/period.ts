import { hasValidCheckMac } from './check-mac';
import type { EcpayMerchant } from './merchant';
import { type EcpayCallOptions, postSigned } from './post';

/**
 * ECPay's card plan (信用卡定期定額): the buyer authorises the first period on ECPay's page
 * (AioCheckOut/V5 with PeriodAmount, PeriodType, Frequency, ExecTimes, PeriodReturnURL), and
 * ECPay then charges the same amount on its own schedule, posting each period's result to
 * PeriodReturnURL. There is no charge a merchant can ask for: the platform reads what ECPay
 * charged (QueryCreditCardPeriodInfo) and stops the plan (CreditCardPeriodAction, Cancel).
 * Sources: ECPay's 全方位金流 documents (定期定額 ?p=2868, 查詢 ?p=2892, 作業 ?p=2900) and its
 * .NET SDK's `PeriodCreditCardTradeInfo`; docs/payments.md lists what is chosen where they are silent.
 */

/** How often ECPay charges: every `frequency` days, months or years, at most `execTimes` times. */
export type PeriodSchedule = { periodType: 'D' | 'M' | 'Y'; frequency: number; execTimes: number };

/** ECPay's limits per PeriodType: Frequency and ExecTimes (the first authorisation counts as one). */
const LIMITS = {
  D: { frequency: 365, execTimes: 999 },
  M: { frequency: 12, execTimes: 99 },
  Y: { frequency: 1, execTimes: 9 },
} as const;

/**
 * The schedule of a plan billed every `count` `interval`s, as many times as ECPay allows; null
 * when ECPay cannot charge on it (every 13 months, every 2 years, more than 365 days).
 */
export function periodScheduleOf(interval: 'day' | 'week' | 'month' | 'year', count: number): PeriodSchedule | null {
  const [periodType, frequency] =
    interval === 'year'
      ? (['Y', count] as const)
      : interval === 'month'
        ? (['M', count] as const)
        : ['D' as const, interval === 'week' ? count * 7 : count];
  if (!Number.isInteger(frequency) || frequency < 1 || frequency > LIMITS[periodType].frequency) return null;
  return { periodType, frequency, execTimes: LIMITS[periodType].execTimes };
}

/** The AioCheckOut fields that make a card trade a plan: the same amount each period. */
export function periodFields(amount: number, schedule: PeriodSchedule, returnUrl: string): Record<string, string> {
  return {
    PeriodAmount: String(amount),
    PeriodType: schedule.periodType,
    Frequency: String(schedule.frequency),
    ExecTimes: String(schedule.execTimes),
    PeriodReturnURL: returnUrl,
  };
}

/** One authorisation of a plan, as ECPay's ExecLog lists them, oldest first (the first is the buyer's). */
export type PeriodExecution = {
  succeeded: boolean;
  amount: number;
  tradeNo: string;
  processDate: string;
  code: string;
};

/** What ECPay says of a plan: its card, whether it still runs, and every authorisation made. */
export type PeriodInfo = {
  merchantTradeNo: string;
  amount: number;
  /** 1 running, 2 finished (every time charged), 0 canceled (by the merchant, or after six failures). */
  execStatus: '0' | '1' | '2' | string;
  card: { first6: string; last4: string };
  executions: PeriodExecution[];
};

/** No answer that can be trusted (network, HTTP status, not ECPay's JSON, another trade): ask again later. */
export class PeriodQueryUnanswered extends Error {}

type Options = EcpayCallOptions;

/**
 * QueryCreditCardPeriodInfo: the plan opened under `merchantTradeNo`. Its answer is JSON that
 * carries no CheckMacValue in the fields ECPay's SDK reads: it is trusted as an answer over TLS
 * from ECPay's own site, and checked to be about this merchant's trade.
 */
export async function queryPeriod(
  merchant: EcpayMerchant,
  merchantTradeNo: string,
  now: Date,
  options: Options = {},
): Promise<PeriodInfo> {
  const request = { MerchantID: merchant.merchantId, MerchantTradeNo: merchantTradeNo, TimeStamp: unix(now) };
  const body = await postSigned(
    merchant,
    '/Cashier/QueryCreditCardPeriodInfo',
    request,
    { ...options, timeoutMs: options.timeoutMs ?? 10_000 },
    PeriodQueryUnanswered,
  );
  let answer: Record<string, unknown>;
  try {
    answer = JSON.parse(body) as Record<string, unknown>;
  } catch {
    throw new PeriodQueryUnanswered('QueryCreditCardPeriodInfo did not answer JSON');
  }
  if (answer.MerchantID !== merchant.merchantId || answer.MerchantTradeNo !== merchantTradeNo) {
    throw new PeriodQueryUnanswered('QueryCreditCardPeriodInfo answered about another trade');
  }
  const log = Array.isArray(answer.ExecLog) ? (answer.ExecLog as Record<string, unknown>[]) : [];
  return {
    merchantTradeNo,
    amount: Number(answer.PeriodAmount ?? 0),
    execStatus: String(answer.ExecStatus ?? ''),
    card: { first6: String(answer.card6no ?? ''), last4: String(answer.card4no ?? '') },
    executions: log.map((entry) => ({
      succeeded: String(entry.RtnCode) === '1',
      amount: Number(entry.amount ?? 0),
      tradeNo: String(entry.TradeNo ?? ''),
      processDate: String(entry.process_date ?? ''),
      code: String(entry.RtnCode ?? ''),
    })),
  };
}

/** ECPay did not confirm a plan action (no answer, HTTP error, a wrong CheckMacValue): it may or may not have happened. */
export class PeriodActionUnanswered extends Error {}

/**
 * CreditCardPeriodAction: `Cancel` stops the plan's later charges (停用); `ReAuth` asks ECPay to
 * authorise a failed period again (補授權). Answers `ok` on RtnCode 1, else ECPay's message.
 */
export async function periodAction(
  merchant: EcpayMerchant,
  merchantTradeNo: string,
  action: 'Cancel' | 'ReAuth',
  now: Date,
  options: Options = {},
): Promise<{ ok: true } | { ok: false; code: string; message: string }> {
  const request = {
    MerchantID: merchant.merchantId,
    MerchantTradeNo: merchantTradeNo,
    Action: action,
    TimeStamp: unix(now),
  };
  const body = await postSigned(
    merchant,
    '/Cashier/CreditCardPeriodAction',
    request,
    { ...options, timeoutMs: options.timeoutMs ?? 10_000 },
    PeriodActionUnanswered,
  );
  const fields = Object.fromEntries(new URLSearchParams(body));
  if (!hasValidCheckMac(fields, merchant) || fields.MerchantTradeNo !== merchantTradeNo) {
    throw new PeriodActionUnanswered('CreditCardPeriodAction answered without a matching CheckMacValue');
  }
  return fields.RtnCode === '1'
    ? { ok: true }
    : { ok: false, code: fields.RtnCode ?? '', message: fields.RtnMsg ?? '' };
}

/** A period's result ECPay posted to PeriodReturnURL, read only when its CheckMacValue and merchant check out. */
export type PeriodNotification = {
  merchantTradeNo: string;
  succeeded: boolean;
  amount: number;
  totalSuccessTimes: number;
  message: string;
};

export function readPeriodNotification(
  body: Record<string, unknown>,
  merchant: EcpayMerchant,
): PeriodNotification | null {
  const fields = Object.fromEntries(Object.entries(body).filter(([, v]) => typeof v === 'string')) as Record<
    string,
    string
  >;
  if (!hasValidCheckMac(fields, merchant) || fields.MerchantID !== merchant.merchantId || !fields.MerchantTradeNo) {
    return null;
  }
  return {
    merchantTradeNo: fields.MerchantTradeNo,
    succeeded: fields.RtnCode === '1',
    amount: Number(fields.Amount ?? 0),
    totalSuccessTimes: Number(fields.TotalSuccessTimes ?? 0),
    message: fields.RtnMsg ?? '',
  };
}

const unix = (now: Date) => String(Math.floor(now.getTime() / 1000));
