import { randomInt } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { html } from '@billing/service';
import { PayuniCipherError, open, seal } from './crypto';
import {
  type EmulatedPayuniTrade,
  type EmulatedSavedCard,
  type EmulatedSdkToken,
  embedEndpoints,
} from './emulator-embed';

export type { EmulatedPayuniTrade } from './emulator-embed';
import { type PayuniCaptureMode, type RefundHost, refundEndpoints, refundQueryFields } from './emulator-refund';
import { PAYUNI_PATHS, type PayuniKeys, payuniDate, payuniDateTime } from './merchant';

/**
 * PAYUNi's endpoints as its SDKs and plugins use them, for tests and for a Sandbox pointed at
 * it: /api/upp (checks the HashInfo and the GCM tag, refuses a MerTradeNo twice, issues ATM
 * accounts and CVS codes and posts them to NotifyURL), the buyer's page with pay and decline
 * buttons, the result posted to NotifyURL (again until answered with a 2xx), and
 * /api/trade/query (Version 2.0, `Result[0][...]`); and UNi Embed (emulator-embed.ts): SDK
 * tokens, the card fields' script `/sdk/uni-payment.js`, merchant_trade with a 3-D Secure page,
 * and /api/credit for saved cards; and refunds of card trades (emulator-refund.ts):
 * /api/trade/close and /api/trade/cancel, the capture and the refunded total in the trade query. Written from the sources named in
 * docs/decisions/0020-payuni-client.md, not from PAYUNi's behaviour: where they are silent it
 * chooses, and docs/payments.md lists those choices.
 */
export interface PayuniEmulator {
  url: string;
  /** The trades opened, by MerTradeNo. */
  trades: Map<string, EmulatedPayuniTrade>;
  /** Every server-to-server post made, with the HTTP status and body the merchant answered. */
  posts: { url: string; fields: Record<string, string>; inside: Record<string, string>; answer: string }[];
  /** The MerTradeNo of every trade query asked, in order. */
  queries: string[];
  /** The buyer (or the bank, for ATM and CVS) pays: NotifyURL hears TradeStatus 1, unless `notify` is false. */
  pay(tradeNo: string, options?: { notify?: boolean }): Promise<void>;
  /** The card is declined: NotifyURL hears TradeStatus 2. */
  decline(tradeNo: string): Promise<void>;
  /** Posts every notification the merchant has not acknowledged again. */
  resendUnacknowledged(): Promise<void>;
  /** The SDK tokens token_get issued, by Token, with the card bound to each (never its CVC). */
  tokens: Map<string, EmulatedSdkToken>;
  /** When paid card trades are captured: at once (the default), or at the next midnight in Taiwan (emulator-refund.ts). */
  captures: { mode: PayuniCaptureMode };
  /** The cards saved for charges without the buyer (UseTokenType 2), by CreditHash. */
  savedCards: Map<string, EmulatedSavedCard>;
  /**
   * Loses the next answer on `path` (a JSON endpoint: token_get, merchant_trade, credit, the trade
   * query, trade/close, trade/cancel) after the request was acted on: `drop` closes the connection unanswered,
   * `http500` answers HTTP 500. Several calls lose that many answers, in order.
   */
  failNext(path: string, how: 'drop' | 'http500'): void;
  close(): Promise<void>;
}

const METHODS = { Credit: '1', ATM: '2', CVS: '3' } as const;

export async function startPayuniEmulator(
  merchant: PayuniKeys & { merchantId: string },
  now: () => Date = () => new Date(),
): Promise<PayuniEmulator> {
  const trades = new Map<string, EmulatedPayuniTrade>();
  const captures: PayuniEmulator['captures'] = { mode: 'at_once' };
  const refundSide: RefundHost = {
    merchant,
    trades,
    now,
    captures,
    answer: (res, path, value) => answer(res, path, value),
    isCard: (trade) => paymentTypeOf(trade) === METHODS.Credit,
  };
  const posts: PayuniEmulator['posts'] = [];
  const queries: string[] = [];
  const failures = new Map<string, ('drop' | 'http500')[]>();
  const envelope = (inside: Record<string, string>, version = '1.0') => ({
    Status: inside.Status ?? 'SUCCESS',
    ...seal(merchant.merchantId, inside, merchant, version),
  });

  async function notify(trade: EmulatedPayuniTrade, inside: Record<string, string>): Promise<void> {
    const fields = envelope(inside);
    let answer: string;
    let ok = false;
    try {
      const response = await fetch(trade.fields.NotifyURL!, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        signal: AbortSignal.timeout(5000),
      });
      ok = response.ok;
      answer = `${response.status} ${(await response.text()).trim()}`;
    } catch (error) {
      answer = `unreachable: ${(error as Error).message}`;
    }
    posts.push({ url: trade.fields.NotifyURL!, fields, inside, answer });
    if (!ok) trade.pending.push(inside);
  }

  const common = (trade: EmulatedPayuniTrade) => ({
    MerID: merchant.merchantId,
    MerTradeNo: trade.fields.MerTradeNo!,
    TradeNo: trade.payuniTradeNo,
    TradeAmt: trade.fields.TradeAmt!,
    PaymentType: paymentTypeOf(trade),
    Gateway: '2',
  });

  async function settle(tradeNo: string, paid: boolean, send = true): Promise<void> {
    const trade = trades.get(tradeNo);
    if (!trade) throw new Error(`No emulated trade ${tradeNo}`);
    if (trade.status === 'paid' || trade.status === 'failed') return;
    trade.status = paid ? 'paid' : 'failed';
    trade.paidAt = paid ? now() : undefined;
    const method = methodOf(trade.fields) ?? 'Credit';
    const when = payuniDateTime(now());
    const inside: Record<string, string> = paid
      ? {
          Status: 'SUCCESS',
          Message: method === 'Credit' ? '授權成功' : '付款成功',
          ...common(trade),
          TradeStatus: '1',
          ...(method === 'Credit'
            ? {
                Card6No: '414763',
                Card4No: '0001',
                AuthCode: digits(6),
                AuthDay: when.slice(0, 10).replaceAll('-', ''),
                AuthTime: when.slice(11).replaceAll(':', ''),
                ResCode: '00',
                AuthType: '1',
              }
            : { PayTime: when }),
        }
      : { Status: 'EMULATOR_DECLINED', Message: '授權失敗', ...common(trade), TradeStatus: '2' };
    if (send) await notify(trade, inside);
  }

  /**
   * 虛擬帳號幕後 / 超商代碼幕後: the account or code issued at once and answered sealed (no page, no
   * post); the payment is posted to NotifyURL later, as for UPP.
   */
  function serverCode(path: string, body: Record<string, string>, res: ServerResponse): void {
    const json = (value: unknown): void => answer(res, path, value);
    let fields: Record<string, string>;
    try {
      fields = open(body, merchant);
    } catch (error) {
      if (!(error instanceof PayuniCipherError)) throw error;
      return json({ Status: 'ERROR', Message: error.message });
    }
    const method = path === PAYUNI_PATHS.atm ? 'ATM' : 'CVS';
    const asUpp = { ...fields, [method]: '1' };
    const refusal = refusalOf(body, asUpp, merchant.merchantId, trades);
    if (refusal) return json({ Status: 'ERROR', Message: refusal });
    const trade: EmulatedPayuniTrade = {
      fields: asUpp,
      payuniTradeNo: payuniTradeNoOf(now()),
      status: 'issued',
      pending: [],
      refunds: [],
    };
    trades.set(fields.MerTradeNo!, trade);
    trade.issued = issuedCode(trade, method, fields.ExpireDate);
    json(envelope(trade.issued, body.Version || '1.0'));
  }

  /** The account or code of an ATM or CVS trade, as its answer and the NotifyURL post give it. */
  function issuedCode(trade: EmulatedPayuniTrade, method: 'ATM' | 'CVS', expireDate: string | undefined) {
    const expires = expireDate ?? payuniDate(new Date(now().getTime() + 7 * 86_400_000));
    return {
      Status: 'SUCCESS',
      Message: method === 'ATM' ? '(ATM)建立成功' : '(CVS)建立成功',
      ...common(trade),
      TradeStatus: '0',
      ...(method === 'ATM'
        ? { BankType: trade.fields.BankType ?? '822', PayNo: digits(14), PaySet: '1' }
        : { Store: 'SEVEN', PayNo: `UN${digits(12)}` }),
      ExpireDate: `${expires} 23:59:59`,
    };
  }

  async function upp(body: Record<string, string>, res: ServerResponse): Promise<void> {
    let fields: Record<string, string>;
    try {
      fields = open(body, merchant);
    } catch (error) {
      if (!(error instanceof PayuniCipherError)) throw error;
      return page(res, 400, html`<h1>${error.message}</h1>`);
    }
    const refusal = refusalOf(body, fields, merchant.merchantId, trades);
    if (refusal) return page(res, 400, html`<h1>${refusal}</h1>`);
    const trade: EmulatedPayuniTrade = {
      fields,
      payuniTradeNo: payuniTradeNoOf(now()),
      status: 'unpaid',
      pending: [],
      refunds: [],
    };
    trades.set(fields.MerTradeNo!, trade);
    const method = methodOf(fields)!;
    if (method !== 'Credit') {
      trade.status = 'issued';
      trade.issued = issuedCode(trade, method, fields.ExpireDate);
      await notify(trade, trade.issued);
    }
    page(res, 200, buyerPage(fields.MerTradeNo!, trade));
  }

  /** A JSON answer, unless the test asked to lose the next one on this path. */
  function answer(res: ServerResponse, path: string, value: unknown): void {
    const how = failures.get(path)?.shift();
    if (how === 'drop') return void res.socket?.destroy();
    if (how === 'http500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('emulated failure');
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  }

  function query(body: Record<string, string>, res: ServerResponse): void {
    const json = (value: unknown): void => answer(res, PAYUNI_PATHS.tradeQuery, value);
    let fields: Record<string, string>;
    try {
      fields = open(body, merchant);
    } catch (error) {
      if (!(error instanceof PayuniCipherError)) throw error;
      return json({ Status: 'ERROR', Message: error.message });
    }
    if (body.MerID !== merchant.merchantId || fields.MerID !== merchant.merchantId) {
      return json({ Status: 'ERROR', Message: 'MerID Error' });
    }
    queries.push(fields.MerTradeNo ?? '');
    const trade = trades.get(fields.MerTradeNo ?? '');
    const inside: Record<string, string> = { Status: 'SUCCESS', Message: '查詢成功' };
    if (trade) {
      const status = { issued: '0', unpaid: '9', paid: '1', failed: '2' }[trade.status];
      Object.assign(inside, {
        'Result[0][MerID]': merchant.merchantId,
        'Result[0][MerTradeNo]': trade.fields.MerTradeNo!,
        'Result[0][TradeNo]': trade.payuniTradeNo,
        'Result[0][TradeAmt]': trade.fields.TradeAmt!,
        'Result[0][TradeStatus]': status,
        'Result[0][PaymentType]': paymentTypeOf(trade),
        'Result[0][CreateDay]': payuniDateTime(new Date(Number(trade.fields.Timestamp) * 1000)),
        'Result[0][PaymentDay]': trade.paidAt ? payuniDateTime(trade.paidAt) : '',
        ...refundQueryFields(trade, refundSide),
      });
    }
    json(envelope(inside, body.Version || '2.0'));
  }

  async function buyer(path: string, res: ServerResponse): Promise<void> {
    const [, tradeNo, action] = /^\/emulator\/trades\/([A-Za-z0-9_-]+)\/(pay|decline)$/.exec(path) ?? [];
    const trade = tradeNo ? trades.get(tradeNo) : undefined;
    if (!trade) return page(res, 404, html`<h1>No such trade</h1>`);
    await settle(tradeNo!, action === 'pay');
    const back = trade.fields.ReturnURL;
    page(
      res,
      200,
      html`<h1>${trade.status === 'paid' ? '付款成功' : '付款失敗'}</h1>
        ${back ? html`<form id="back" method="post" action="${back}"><button>返回商店</button></form>` : ''}`,
    );
  }

  const server: Server = createServer((req, res) => {
    void handle(req, res).catch((error: Error) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(error.message);
    });
  });
  const embed = embedEndpoints({
    merchant,
    now,
    url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    trades,
    notify,
    answer,
    page,
  });
  const refunds = refundEndpoints(refundSide);
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    const fields = req.method === 'POST' ? Object.fromEntries(new URLSearchParams(await bodyOf(req))) : {};
    if (await embed.handle(req.method ?? 'GET', path, fields, res)) return;
    if (refunds.handle(req.method ?? 'GET', path, fields, res)) return;
    if (req.method !== 'POST') return page(res, 405, html`<h1>POST only</h1>`);
    if (path === PAYUNI_PATHS.upp) return upp(fields, res);
    if (path === PAYUNI_PATHS.atm || path === PAYUNI_PATHS.cvs) return serverCode(path, fields, res);
    if (path === PAYUNI_PATHS.tradeQuery) return query(fields, res);
    return buyer(path, res);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    trades,
    posts,
    queries,
    captures,
    tokens: embed.tokens,
    savedCards: embed.savedCards,
    failNext: (path, how) => void failures.set(path, [...(failures.get(path) ?? []), how]),
    pay: (tradeNo, options) => settle(tradeNo, true, options?.notify ?? true),
    decline: (tradeNo) => settle(tradeNo, false),
    async resendUnacknowledged() {
      for (const trade of trades.values()) {
        const pending = trade.pending.splice(0);
        for (const inside of pending) await notify(trade, inside);
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const methodOf = (fields: Record<string, string>) =>
  (Object.keys(METHODS) as (keyof typeof METHODS)[]).find((name) => fields[name] === '1');
/** PaymentType: the method a UPP form switched on; every other trade (UNi Embed, a saved card) is a card. */
const paymentTypeOf = (trade: EmulatedPayuniTrade) => METHODS[methodOf(trade.fields) ?? 'Credit'];

function refusalOf(
  body: Record<string, string>,
  fields: Record<string, string>,
  merchantId: string,
  trades: Map<string, EmulatedPayuniTrade>,
): string | null {
  if (body.MerID !== merchantId || fields.MerID !== merchantId) return 'MerID Error';
  const missing = ['MerTradeNo', 'TradeAmt', 'Timestamp', 'NotifyURL'].find((name) => !fields[name]);
  if (missing) return `${missing} Error`;
  if (!/^[A-Za-z0-9_-]{1,25}$/.test(fields.MerTradeNo!)) return 'MerTradeNo Error';
  if (trades.has(fields.MerTradeNo!)) return 'MerTradeNo Duplicate';
  if (!/^[1-9][0-9]*$/.test(fields.TradeAmt!)) return 'TradeAmt Error';
  if (!methodOf(fields)) return 'No payment method (Credit, ATM or CVS) Error';
  if (fields.ExpireDate !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(fields.ExpireDate)) return 'ExpireDate Error';
  return null;
}

function buyerPage(tradeNo: string, trade: EmulatedPayuniTrade) {
  const info = trade.issued;
  return html`<h1>PAYUNi emulator: ${trade.fields.ProdDesc ?? ''} NT$${trade.fields.TradeAmt}</h1>
    ${info?.BankType ? html`<p>銀行 ${info.BankType} 帳號 <span id="account">${info.PayNo}</span> 期限 ${info.ExpireDate}</p>` : ''}
    ${info?.Store ? html`<p>繳費代碼 <span id="payment-no">${info.PayNo}</span> 期限 ${info.ExpireDate}</p>` : ''}
    <form method="post" action="/emulator/trades/${tradeNo}/pay"><button id="pay">Pay</button></form>
    <form method="post" action="/emulator/trades/${tradeNo}/decline"><button id="decline">Decline</button></form>`;
}

const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');
const payuniTradeNoOf = (now: Date) => `${Math.floor(now.getTime() / 1000)}${digits(9)}`;

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
