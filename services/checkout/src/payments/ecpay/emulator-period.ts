import { randomInt } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { checkMacValue, hasValidCheckMac } from './check-mac';
import { type EcpayMerchant, ecpayDateTime } from './merchant';

/**
 * The card plans (定期定額) of the ECPay emulator: a Credit trade with PeriodAmount becomes a plan
 * once paid; `chargePeriod` is ECPay's scheduler charging the next period (posted to
 * PeriodReturnURL); QueryCreditCardPeriodInfo answers the plan with its ExecLog;
 * CreditCardPeriodAction cancels it or authorises a failed period again.
 */
export type EmulatedPlan = {
  amount: number;
  /** 1 running, 0 canceled. */
  execStatus: '0' | '1';
  card: { first6: string; last4: string };
  executions: {
    RtnCode: string;
    amount: number;
    gwsr: number;
    process_date: string;
    auth_code: string;
    TradeNo: string;
  }[];
  /** Every CreditCardPeriodAction asked, in order. */
  actions: string[];
  /** The card declines a ReAuth of its failed period too. */
  declinesReAuth: boolean;
};

type PlanTrade = { fields: Record<string, string>; ecpayTradeNo: string; plan?: EmulatedPlan };
type Merchant = Omit<EcpayMerchant, 'baseUrl'>;

const PERIOD_LIMITS: Record<string, { frequency: number; execTimes: number }> = {
  D: { frequency: 365, execTimes: 999 },
  M: { frequency: 12, execTimes: 99 },
  Y: { frequency: 1, execTimes: 9 },
};

/** Why AioCheckOut refuses a plan's fields, or null (a trade without PeriodAmount is no plan). */
export function periodRefusal(fields: Record<string, string>): string | null {
  if (fields.PeriodAmount === undefined) return null;
  if (fields.ChoosePayment !== 'Credit') return 'PeriodAmount needs ChoosePayment Credit';
  if (fields.PeriodAmount !== fields.TotalAmount) return 'PeriodAmount must equal TotalAmount';
  const limits = PERIOD_LIMITS[fields.PeriodType ?? ''];
  if (!limits) return 'PeriodType Error';
  const frequency = Number(fields.Frequency);
  const execTimes = Number(fields.ExecTimes);
  if (!Number.isInteger(frequency) || frequency < 1 || frequency > limits.frequency) return 'Frequency Error';
  if (!Number.isInteger(execTimes) || execTimes < 2 || execTimes > limits.execTimes) return 'ExecTimes Error';
  if (!fields.PeriodReturnURL) return 'PeriodReturnURL Error';
  return null;
}

/** The plan a paid trade with PeriodAmount starts: its first authorisation is the buyer's. */
export function startPlan(trade: PlanTrade, now: Date): void {
  if (trade.fields.PeriodAmount === undefined) return;
  const amount = Number(trade.fields.PeriodAmount);
  trade.plan = {
    amount,
    execStatus: '1',
    card: { first6: '431195', last4: '2222' },
    executions: [execution(amount, true, trade.ecpayTradeNo, now)],
    actions: [],
    declinesReAuth: false,
  };
}

/**
 * ECPay's scheduler charges the plan's next period: the authorisation is added to its ExecLog and
 * posted to PeriodReturnURL (unless `notify` is false). A canceled plan is not charged.
 */
export async function chargePeriod(
  trade: PlanTrade,
  merchant: Merchant,
  now: Date,
  options: { paid: boolean; notify: boolean; declinesReAuth?: boolean },
  post: (url: string, fields: Record<string, string>) => Promise<string>,
): Promise<void> {
  const plan = trade.plan;
  if (!plan) throw new Error('Not a plan: its trade had no PeriodAmount or was never paid');
  if (plan.execStatus !== '1') return;
  const made = execution(plan.amount, options.paid, ecpayTradeNo(now), now);
  plan.declinesReAuth = options.declinesReAuth ?? false;
  plan.executions.push(made);
  if (!options.notify) return;
  const fields: Record<string, string> = {
    MerchantID: merchant.merchantId,
    MerchantTradeNo: trade.fields.MerchantTradeNo!,
    RtnCode: made.RtnCode,
    RtnMsg: options.paid ? '授權成功' : '授權失敗',
    PeriodType: trade.fields.PeriodType!,
    Frequency: trade.fields.Frequency!,
    ExecTimes: trade.fields.ExecTimes!,
    Amount: String(plan.amount),
    Gwsr: String(made.gwsr),
    ProcessDate: made.process_date,
    AuthCode: made.auth_code,
    FirstAuthAmount: String(plan.amount),
    TotalSuccessTimes: String(plan.executions.filter((e) => e.RtnCode === '1').length),
    SimulatePaid: '0',
  };
  await post(trade.fields.PeriodReturnURL!, { ...fields, CheckMacValue: checkMacValue(fields, merchant) });
}

/** QueryCreditCardPeriodInfo: JSON, as ECPay's SDK reads it (no CheckMacValue). */
export function answerPeriodQuery(
  fields: Record<string, string>,
  merchant: Merchant,
  trades: Map<string, PlanTrade>,
  res: ServerResponse,
): void {
  if (!hasValidCheckMac(fields, merchant) || fields.MerchantID !== merchant.merchantId) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('CheckMacValue Error');
    return;
  }
  const trade = trades.get(fields.MerchantTradeNo ?? '');
  const plan = trade?.plan;
  const first = plan?.executions[0];
  const succeeded = plan?.executions.filter((e) => e.RtnCode === '1') ?? [];
  res.writeHead(200, { 'content-type': 'application/json' }).end(
    JSON.stringify({
      MerchantID: merchant.merchantId,
      MerchantTradeNo: fields.MerchantTradeNo ?? '',
      TradeNo: trade?.ecpayTradeNo ?? '',
      RtnCode: plan ? 1 : 0,
      PeriodType: trade?.fields.PeriodType ?? '',
      Frequency: Number(trade?.fields.Frequency ?? 0),
      ExecTimes: Number(trade?.fields.ExecTimes ?? 0),
      PeriodAmount: plan?.amount ?? 0,
      amount: first?.amount ?? 0,
      gwsr: first?.gwsr ?? 0,
      process_date: first?.process_date ?? '',
      auth_code: first?.auth_code ?? '',
      card4no: plan?.card.last4 ?? '',
      card6no: plan?.card.first6 ?? '',
      TotalSuccessTimes: succeeded.length,
      TotalSuccessAmount: succeeded.reduce((sum, e) => sum + e.amount, 0),
      ExecStatus: plan?.execStatus ?? '',
      ExecLog: plan?.executions ?? [],
    }),
  );
}

/** CreditCardPeriodAction: Cancel stops the plan; ReAuth authorises the last failed period again. */
export function answerPeriodAction(
  fields: Record<string, string>,
  merchant: Merchant,
  trades: Map<string, PlanTrade>,
  now: Date,
  res: ServerResponse,
): void {
  const plan = trades.get(fields.MerchantTradeNo ?? '')?.plan;
  const answer = (code: string, message: string) => {
    const out = {
      MerchantID: merchant.merchantId,
      MerchantTradeNo: fields.MerchantTradeNo ?? '',
      RtnCode: code,
      RtnMsg: message,
    };
    res
      .writeHead(200, { 'content-type': 'text/plain' })
      .end(new URLSearchParams({ ...out, CheckMacValue: checkMacValue(out, merchant) }).toString());
  };
  if (!hasValidCheckMac(fields, merchant) || fields.MerchantID !== merchant.merchantId) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end('CheckMacValue Error');
    return;
  }
  if (!plan) return answer('10100050', 'No such plan');
  plan.actions.push(fields.Action ?? '');
  if (fields.Action === 'Cancel') {
    plan.execStatus = '0';
    return answer('1', '停用成功');
  }
  const last = plan.executions.at(-1);
  if (fields.Action === 'ReAuth' && plan.declinesReAuth) return answer('10100058', '補授權失敗');
  if (fields.Action === 'ReAuth' && plan.execStatus === '1' && last && last.RtnCode !== '1') {
    plan.executions.push(execution(plan.amount, true, ecpayTradeNo(now), now));
    return answer('1', '補授權成功');
  }
  answer('10100051', 'Action Error');
}

function execution(amount: number, paid: boolean, tradeNo: string, now: Date): EmulatedPlan['executions'][number] {
  return {
    RtnCode: paid ? '1' : '10100058',
    amount,
    gwsr: randomInt(1_000_000, 9_999_999),
    process_date: ecpayDateTime(now),
    auth_code: paid ? String(randomInt(100_000, 999_999)) : '',
    TradeNo: tradeNo,
  };
}

const ecpayTradeNo = (now: Date) =>
  `${ecpayDateTime(now).replace(/\D/g, '').slice(2, 14)}${String(randomInt(10_000_000, 99_999_999))}`;
