import { randomInt } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { html } from '@billing/service';
import { checkMacValue, hasValidCheckMac } from './check-mac';
import { type EcpayMerchant, ecpayDateTime } from './merchant';
import { NOTIFICATION_RECEIVED } from './notifications';
import {
  type EmulatedPlan,
  answerPeriodAction,
  answerPeriodQuery,
  chargePeriod,
  periodRefusal,
  startPlan,
} from './emulator-period';
import { EmulatedCaptures, answerDoAction } from './emulator-refund';

/**
 * ECPay's AIO endpoints as its documents describe them, for tests and for a Sandbox pointed at
 * it: AioCheckOut/V5 (checks the CheckMacValue, refuses a MerchantTradeNo twice, issues ATM
 * accounts and CVS codes and posts them to PaymentInfoURL), the buyer's page with pay and
 * decline buttons, the result posted to ReturnURL (again until answered `1|OK`), and
 * QueryTradeInfo/V5; card plans (定期定額, emulator-period.ts): the periods charged, their
 * results posted to PeriodReturnURL, QueryCreditCardPeriodInfo and CreditCardPeriodAction. Written from the documents, not from ECPay's behaviour: where they are
 * silent it chooses, and `docs/payments.md` lists those choices.
 */
export interface EcpayEmulator {
  url: string;
  /** The trades opened, by MerchantTradeNo. */
  trades: Map<string, EmulatedTrade>;
  /** Every server-to-server post made, with what the merchant answered. */
  posts: { url: string; fields: Record<string, string>; answer: string }[];
  /** The MerchantTradeNo of every QueryTradeInfo asked, in order. */
  queries: string[];
  /**
   * The buyer (or the bank, for ATM and CVS) pays the trade: ReturnURL hears RtnCode 1, unless
   * `notify` is false (a post that never arrives; QueryTradeInfo still says paid).
   */
  pay(tradeNo: string, options?: { notify?: boolean }): Promise<void>;
  /** The card is declined: ReturnURL hears the failure. */
  decline(tradeNo: string): Promise<void>;
  /**
   * A paid trade undone at ECPay without a word to the merchant (voided in ECPay's site, a
   * chargeback): QueryTradeInfo no longer says paid.
   */
  voidTrade(tradeNo: string): void;
  /** The next ATM account or CVS code is issued but its PaymentInfoURL post never arrives (QueryPaymentInfo still has it). */
  losePaymentInfoPost(): void;
  /** Posts every result the merchant has not answered `1|OK` again, as ECPay does. */
  resendUnacknowledged(): Promise<void>;
  /**
   * ECPay's scheduler charges the next period of the plan opened by `tradeNo` (paid unless
   * `paid` is false), posting it to PeriodReturnURL unless `notify` is false.
   */
  /** What DoAction refunded so far, by ECPay TradeNo (a trade's, or a plan period's). */
  refunded: Map<string, number>;
  /** When card authorisations are captured: at once (the default) or at ECPay's daily 20:15 (`captures.mode`). */
  captures: EmulatedCaptures;
  /**
   * Loses the next answer on `path` after the request was acted on: `drop` closes the connection
   * unanswered, `http500` answers HTTP 500. Several calls lose that many answers, in order.
   */
  failNext(path: string, how: 'drop' | 'http500'): void;
  chargePeriod(
    tradeNo: string,
    options?: { paid?: boolean; notify?: boolean; declinesReAuth?: boolean },
  ): Promise<void>;
  close(): Promise<void>;
}

export interface EmulatedTrade {
  fields: Record<string, string>;
  ecpayTradeNo: string;
  status: 'unpaid' | 'paid' | 'failed';
  paidAt?: Date;
  /** The last ReturnURL post, kept to be sent again until acknowledged. */
  result?: Record<string, string>;
  acknowledged: boolean;
  paymentInfo?: Record<string, string>;
  /** A paid trade with PeriodAmount: the card plan ECPay charges on its own schedule. */
  plan?: EmulatedPlan;
}

const FAILED = { RtnCode: '10100058', RtnMsg: '付款失敗' };

export async function startEcpayEmulator(
  merchant: Omit<EcpayMerchant, 'baseUrl'>,
  now: () => Date = () => new Date(),
): Promise<EcpayEmulator> {
  const trades = new Map<string, EmulatedTrade>();
  const posts: EcpayEmulator['posts'] = [];
  const queries: string[] = [];
  const refunded = new Map<string, number>();
  const captures = new EmulatedCaptures(now);
  const failures = new Map<string, ('drop' | 'http500')[]>();
  let losePaymentInfo = false;
  const sign = (fields: Record<string, string>) => ({ ...fields, CheckMacValue: checkMacValue(fields, merchant) });

  async function post(url: string, fields: Record<string, string>): Promise<string> {
    let answer: string;
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        signal: AbortSignal.timeout(5000),
      });
      answer = (await response.text()).trim();
    } catch (error) {
      answer = `unreachable: ${(error as Error).message}`;
    }
    posts.push({ url, fields, answer });
    return answer;
  }

  async function settle(tradeNo: string, paid: boolean, notify = true): Promise<void> {
    const trade = trades.get(tradeNo);
    if (!trade) throw new Error(`No emulated trade ${tradeNo}`);
    if (trade.status !== 'unpaid') return;
    trade.status = paid ? 'paid' : 'failed';
    trade.paidAt = paid ? now() : undefined;
    if (paid) startPlan(trade, now());
    trade.result = sign({
      MerchantID: merchant.merchantId,
      MerchantTradeNo: tradeNo,
      StoreID: '',
      TradeNo: trade.ecpayTradeNo,
      TradeAmt: trade.fields.TotalAmount!,
      PaymentDate: paid ? ecpayDateTime(trade.paidAt!) : '',
      PaymentType: paymentTypeOf(trade.fields.ChoosePayment!),
      PaymentTypeChargeFee: '0',
      TradeDate: trade.fields.MerchantTradeDate!,
      SimulatePaid: '0',
      ...(paid ? { RtnCode: '1', RtnMsg: '交易成功' } : FAILED),
    });
    if (notify) trade.acknowledged = (await post(trade.fields.ReturnURL!, trade.result)) === NOTIFICATION_RECEIVED;
  }

  async function checkOut(fields: Record<string, string>, res: ServerResponse): Promise<void> {
    const refusal = refusalOf(fields, merchant, trades) ?? periodRefusal(fields);
    if (refusal) return page(res, 400, html`<h1>${refusal}</h1>`);
    const trade: EmulatedTrade = { fields, ecpayTradeNo: ecpayTradeNoOf(now()), status: 'unpaid', acknowledged: false };
    trades.set(fields.MerchantTradeNo!, trade);
    if (fields.ChoosePayment === 'ATM' || fields.ChoosePayment === 'CVS') {
      trade.paymentInfo = sign(paymentInfoOf(fields, trade, merchant.merchantId, now()));
      if (fields.PaymentInfoURL && !losePaymentInfo) await post(fields.PaymentInfoURL, trade.paymentInfo);
      losePaymentInfo = false;
    }
    page(res, 200, buyerPage(fields.MerchantTradeNo!, trade));
  }

  /**
   * A query's trade (undefined when ECPay never saw it), noted in `queries`; false once a query
   * with a wrong CheckMacValue or a TimeStamp more than 3 minutes off was answered 400.
   */
  function queriedTrade(fields: Record<string, string>, res: ServerResponse): EmulatedTrade | undefined | false {
    const skew = Math.abs(now().getTime() / 1000 - Number(fields.TimeStamp));
    if (!hasValidCheckMac(fields, merchant) || !(skew <= 180)) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('CheckMacValue or TimeStamp Error');
      return false;
    }
    queries.push(fields.MerchantTradeNo ?? '');
    return trades.get(fields.MerchantTradeNo ?? '');
  }

  function query(fields: Record<string, string>, res: ServerResponse): void {
    const trade = queriedTrade(fields, res);
    if (trade === false) return;
    const answer = sign({
      MerchantID: merchant.merchantId,
      MerchantTradeNo: fields.MerchantTradeNo ?? '',
      StoreID: '',
      TradeNo: trade?.ecpayTradeNo ?? '',
      TradeAmt: trade?.fields.TotalAmount ?? '0',
      PaymentDate: trade?.paidAt ? ecpayDateTime(trade.paidAt) : '',
      PaymentType: trade ? paymentTypeOf(trade.fields.ChoosePayment!) : '',
      HandlingCharge: '0',
      PaymentTypeChargeFee: '0',
      TradeDate: trade?.fields.MerchantTradeDate ?? '',
      TradeStatus: trade?.status === 'paid' ? '1' : trade?.status === 'failed' ? '10200095' : '0',
      ItemName: trade?.fields.ItemName ?? '',
    });
    res.writeHead(200, { 'content-type': 'text/html' }).end(new URLSearchParams(answer).toString());
  }

  /**
   * The buyer on ECPay's page: a card goes through the bank's 3-D Secure step first (a code
   * page, `otp`), then the result; the browser is sent back by a form posted to OrderResultURL
   * with ECPay's signed result, as ECPay does, or by a link to ClientBackURL.
   */
  /** QueryPaymentInfo: the account or code issued, with the fields PaymentInfoURL got, else a signed answer without one. */
  function paymentInfoQuery(fields: Record<string, string>, res: ServerResponse): void {
    const trade = queriedTrade(fields, res);
    if (trade === false) return;
    const answer =
      trade?.paymentInfo ??
      sign({
        MerchantID: merchant.merchantId,
        MerchantTradeNo: fields.MerchantTradeNo ?? '',
        RtnCode: '10200047',
        RtnMsg: 'Cant not find the trade data.',
      });
    res.writeHead(200, { 'content-type': 'text/html' }).end(new URLSearchParams(answer).toString());
  }

  async function buyer(path: string, res: ServerResponse): Promise<void> {
    const [, tradeNo, action] = /^\/emulator\/trades\/([A-Za-z0-9]+)\/(pay|decline|otp)$/.exec(path) ?? [];
    const trade = tradeNo ? trades.get(tradeNo) : undefined;
    if (!trade) return page(res, 404, html`<h1>No such trade</h1>`);
    if (action === 'pay' && trade.fields.ChoosePayment === 'Credit' && trade.status === 'unpaid') {
      return page(
        res,
        200,
        html`<h1>3-D Secure</h1>
          <p>Enter the code your bank sent (emulator: any code).</p>
          <form method="post" action="/emulator/trades/${tradeNo}/otp">
            <input name="otp" value="123456" aria-label="OTP" /><button id="otp-pass">Confirm</button>
          </form>`,
      );
    }
    await settle(tradeNo!, action !== 'decline');
    const heading = html`<h1>${trade.status === 'paid' ? '交易成功' : '付款失敗'}</h1>`;
    if (trade.fields.OrderResultURL && trade.result) {
      const fields = Object.entries(trade.result).map(
        ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
      );
      return page(
        res,
        200,
        html`${heading}
          <form id="back" method="post" action="${trade.fields.OrderResultURL}">
            ${fields}<button>返回商店</button>
          </form>`,
      );
    }
    const back = trade.fields.ClientBackURL;
    page(res, 200, html`${heading} ${back ? html`<a id="back" href="${back}">返回商店</a>` : ''}`);
  }

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(error.message);
    });
  });
  /** Acts on the request, then loses its answer. */
  function lose(path: string, fields: Record<string, string>, how: 'drop' | 'http500', res: ServerResponse): void {
    const swallowed = { writeHead: () => swallowed, end: () => swallowed } as unknown as ServerResponse;
    if (path === '/CreditDetail/DoAction') answerDoAction(fields, merchant, trades, refunded, captures, swallowed);
    if (how === 'drop') return void res.socket?.destroy();
    res.writeHead(500, { 'content-type': 'text/plain' }).end('emulated failure');
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    if (req.method !== 'POST') return page(res, 405, html`<h1>POST only</h1>`);
    const fields = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
    const failure = failures.get(path)?.shift();
    if (failure) return lose(path, fields, failure, res);
    if (path === '/Cashier/AioCheckOut/V5') return checkOut(fields, res);
    if (path === '/Cashier/QueryTradeInfo/V5') return query(fields, res);
    if (path === '/Cashier/QueryPaymentInfo') return paymentInfoQuery(fields, res);
    if (path === '/Cashier/QueryCreditCardPeriodInfo') return answerPeriodQuery(fields, merchant, trades, res);
    if (path === '/CreditDetail/DoAction') return answerDoAction(fields, merchant, trades, refunded, captures, res);
    if (path === '/Cashier/CreditCardPeriodAction') return answerPeriodAction(fields, merchant, trades, now(), res);
    return buyer(path, res);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    trades,
    posts,
    queries,
    pay: (tradeNo, options) => settle(tradeNo, true, options?.notify ?? true),
    decline: (tradeNo) => settle(tradeNo, false),
    losePaymentInfoPost: () => void (losePaymentInfo = true),
    voidTrade: (tradeNo) => {
      const trade = trades.get(tradeNo);
      if (!trade) throw new Error(`No emulated trade ${tradeNo}`);
      trade.status = 'failed';
    },
    async resendUnacknowledged() {
      for (const trade of trades.values()) {
        if (trade.result && !trade.acknowledged) {
          trade.acknowledged = (await post(trade.fields.ReturnURL!, trade.result)) === NOTIFICATION_RECEIVED;
        }
      }
    },
    refunded,
    captures,
    failNext: (path, how) => void failures.set(path, [...(failures.get(path) ?? []), how]),
    chargePeriod: (tradeNo, options) => {
      const trade = trades.get(tradeNo);
      if (!trade) throw new Error(`No emulated trade ${tradeNo}`);
      return chargePeriod(
        trade,
        merchant,
        now(),
        { paid: options?.paid ?? true, notify: options?.notify ?? true, declinesReAuth: options?.declinesReAuth },
        post,
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const REQUIRED = [
  'MerchantID',
  'MerchantTradeNo',
  'MerchantTradeDate',
  'PaymentType',
  'TotalAmount',
  'TradeDesc',
  'ItemName',
  'ReturnURL',
  'ChoosePayment',
  'EncryptType',
];

function refusalOf(
  fields: Record<string, string>,
  merchant: Omit<EcpayMerchant, 'baseUrl'>,
  trades: Map<string, EmulatedTrade>,
): string | null {
  if (!hasValidCheckMac(fields, merchant)) return 'CheckMacValue Error';
  const missing = REQUIRED.find((name) => !fields[name]);
  if (missing) return `${missing} Error`;
  if (fields.MerchantID !== merchant.merchantId) return 'MerchantID Error';
  if (!/^[A-Za-z0-9]{1,20}$/.test(fields.MerchantTradeNo!)) return 'MerchantTradeNo Error';
  if (trades.has(fields.MerchantTradeNo!)) return '訂單編號重複 (MerchantTradeNo Duplicate)';
  if (!/^[1-9][0-9]*$/.test(fields.TotalAmount!)) return 'TotalAmount Error';
  if (!['Credit', 'ATM', 'CVS'].includes(fields.ChoosePayment!)) return 'ChoosePayment Error';
  return null;
}

function paymentInfoOf(
  fields: Record<string, string>,
  trade: EmulatedTrade,
  merchantId: string,
  now: Date,
): Record<string, string> {
  const common = {
    MerchantID: merchantId,
    MerchantTradeNo: fields.MerchantTradeNo!,
    StoreID: '',
    TradeNo: trade.ecpayTradeNo,
    TradeAmt: fields.TotalAmount!,
    PaymentType: paymentTypeOf(fields.ChoosePayment!),
    TradeDate: fields.MerchantTradeDate!,
  };
  if (fields.ChoosePayment === 'ATM') {
    const days = Number(fields.ExpireDate ?? 3);
    return {
      ...common,
      RtnCode: '2',
      RtnMsg: 'Get VirtualAccount Succeeded',
      BankCode: '812',
      vAccount: digits(14),
      ExpireDate: ecpayDateTime(new Date(now.getTime() + days * 86_400_000)).slice(0, 10),
    };
  }
  const minutes = Number(fields.StoreExpireDate ?? 10_080);
  return {
    ...common,
    RtnCode: '10100073',
    RtnMsg: 'Get CVS Code Succeeded',
    PaymentNo: `LLL${digits(11)}`,
    ExpireDate: ecpayDateTime(new Date(now.getTime() + minutes * 60_000)),
    Barcode1: '',
    Barcode2: '',
    Barcode3: '',
  };
}

function buyerPage(tradeNo: string, trade: EmulatedTrade) {
  const info = trade.paymentInfo;
  return html`<h1>ECPay emulator: ${trade.fields.ItemName} NT$${trade.fields.TotalAmount}</h1>
    ${info?.vAccount ? html`<p>銀行 ${info.BankCode} 帳號 <span id="account">${info.vAccount}</span> 期限 ${info.ExpireDate}</p>` : ''}
    ${info?.PaymentNo ? html`<p>繳費代碼 <span id="payment-no">${info.PaymentNo}</span> 期限 ${info.ExpireDate}</p>` : ''}
    <form method="post" action="/emulator/trades/${tradeNo}/pay"><button id="pay">Pay</button></form>
    <form method="post" action="/emulator/trades/${tradeNo}/decline"><button id="decline">Decline</button></form>`;
}

const paymentTypeOf = (method: string) =>
  method === 'Credit' ? 'Credit_CreditCard' : method === 'ATM' ? 'ATM_TAISHIN' : 'CVS_CVS';
const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
const ecpayTradeNoOf = (now: Date) => `${ecpayDateTime(now).replace(/\D/g, '').slice(2, 14)}${digits(8)}`;

function page(res: ServerResponse, status: number, body: { toString(): string }): void {
  res
    .writeHead(status, { 'content-type': 'text/html; charset=utf-8' })
    .end(`<!doctype html><meta charset="utf-8">${body}`);
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
