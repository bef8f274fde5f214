import { randomBytes, randomInt } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { type Html, html, raw } from '@billing/service';
import { TEST_CARDS, isExpired, luhnValid, parseExpiry } from '../sandbox';
import { PayuniCipherError, open, seal } from './crypto';
import { PAYUNI_PATHS, type PayuniKeys, payuniDateTime } from './merchant';

export interface EmulatedPayuniTrade {
  /** The fields inside the EncryptInfo of the request that opened it (UPP, merchant_trade or credit). */
  fields: Record<string, string>;
  payuniTradeNo: string;
  status: 'issued' | 'unpaid' | 'paid' | 'failed';
  paidAt?: Date;
  issued?: Record<string, string>;
  /** Notifications not yet acknowledged, oldest first. */
  pending: Record<string, string>[];
  /** A trade of UNi Embed or of a saved card: the card it charged. */
  card?: EmulatedCard;
  /** The TWD of each refund made of it (/api/trade/close, emulator-refund.ts), oldest first. */
  refunds: number[];
  /** Its authorisation canceled before the capture (/api/trade/cancel): nothing of it was taken. */
  authorisationCanceled?: boolean;
}

/**
 * The PAYUNi emulator's UNi Embed side (see emulator.ts): /api/iframe/token_get,
 * `/sdk/uni-payment.js` and the bind it posts to, /api/iframe/merchant_trade, the 3-D Secure
 * page, and /api/credit. Where the sources are silent it chooses, and says so here:
 *
 * - an SDK token lasts 10 minutes; a card can be bound to it again until a charge of it is paid
 *   or sent to 3-D Secure, after which it is used up;
 * - a MerTradeNo used before is refused unsigned, `{ Status: 'MER_TRADE_NO_DUPLICATE' }`
 *   (PAYUNi's code for it is not known), like the other parameter errors (`Status: 'ERROR'`);
 * - declines are signed, TradeStatus 2, with Statuses of the emulator's own (`EMULATOR_...`);
 * - the challenge card always answers a 3-D Secure URL (the bank insists); other cards pay
 *   without it even when API3D=1 asks (a frictionless bank);
 * - a token made with UseTokenType 2 gets a CreditHash (32 hex digits) at its first paid charge,
 *   the same one again for the same card under the same CreditToken;
 * - a charge paid or declined in merchant_trade's own answer is not also posted to NotifyURL;
 *   a 3-D Secure result is posted there and brought to ReturnURL by the buyer's browser.
 */

/** A card bound to an SDK token: never its CVC, which is checked at the bind and dropped. */
export interface EmulatedCard {
  number: string;
  expMonth: number;
  expYear: number;
}

export interface EmulatedSdkToken {
  /** The fields inside token_get's EncryptInfo (IFrameDomain, UseTokenType, CreditToken). */
  fields: Record<string, string>;
  expiresAt: Date;
  card?: EmulatedCard;
  /** A charge of it was paid or sent to 3-D Secure: it charges nothing again. */
  used: boolean;
}

/** A card saved for charges without the buyer, found by CreditToken and CreditHash. */
export interface EmulatedSavedCard extends EmulatedCard {
  creditToken: string;
  creditHash: string;
}

/** What the embed side needs of the emulator around it. */
export interface EmbedHost {
  merchant: PayuniKeys & { merchantId: string };
  now: () => Date;
  url: () => string;
  trades: Map<string, EmulatedPayuniTrade>;
  /** Posts `inside` to the trade's NotifyURL, recorded and resent until a 2xx. */
  notify(trade: EmulatedPayuniTrade, inside: Record<string, string>): Promise<void>;
  /** Answers JSON on `path`, unless the test asked to lose that answer (`failNext`). */
  answer(res: ServerResponse, path: string, value: unknown): void;
  page(res: ServerResponse, status: number, body: Html): void;
}

const SDK_TOKEN_MINUTES = 10;
const CREDIT_TOKEN = /^[A-Za-z0-9@.#$%_-]{1,150}$/;

const DECLINES: Record<string, { Status: string; Message: string }> = {
  [TEST_CARDS.genericDecline]: { Status: 'EMULATOR_CARD_DECLINED', Message: '授權失敗：發卡行拒絕 (card declined)' },
  [TEST_CARDS.insufficientFunds]: {
    Status: 'EMULATOR_INSUFFICIENT_FUNDS',
    Message: '授權失敗：額度不足 (insufficient funds)',
  },
  [TEST_CARDS.expiredCard]: { Status: 'EMULATOR_EXPIRED_CARD', Message: '授權失敗：卡片過期 (expired card)' },
};
const TOKEN_REFUSED = { Status: 'EMULATOR_TOKEN_ERROR', Message: 'Token 不存在、已過期、已使用或未綁卡 (SDK token)' };
const PAIR_UNKNOWN = {
  Status: 'EMULATOR_CREDIT_HASH_ERROR',
  Message: 'CreditToken 與 CreditHash 不符 (no card saved under this pair)',
};
const LATER_DECLINED = { Status: 'EMULATOR_CARD_DECLINED', Message: '授權失敗：發卡行拒絕 (saved card declined)' };
const THREE_D_FAILED = { Status: 'EMULATOR_3D_FAILED', Message: '3D 驗證失敗 (3-D Secure failed)' };

/** Unsigned refusals, as PAYUNi answers parameter errors (no EncryptInfo). */
const unsigned = (Status: string, Message: string) => ({ Status, Message });

export function embedEndpoints(host: EmbedHost) {
  const { merchant, trades } = host;
  const tokens = new Map<string, EmulatedSdkToken>();
  const savedCards = new Map<string, EmulatedSavedCard>();
  /** Trades waiting for the buyer at the 3-D Secure page, by PAYUNi's TradeNo. */
  const challenges = new Map<string, { tradeNo: string; token?: EmulatedSdkToken; result?: Record<string, string> }>();
  const sealed = (inside: Record<string, string>, version = '1.0') => ({
    Status: inside.Status ?? 'SUCCESS',
    ...seal(merchant.merchantId, inside, merchant, version),
  });

  /** The request's fields once HashInfo, GCM tag and MerID check out, and the unsigned refusal otherwise. */
  function opened(body: Record<string, string>, required: string[]) {
    let fields: Record<string, string>;
    try {
      fields = open(body, merchant);
    } catch (error) {
      if (!(error instanceof PayuniCipherError)) throw error;
      return { refusal: unsigned('ERROR', error.message) };
    }
    if (body.MerID !== merchant.merchantId || fields.MerID !== merchant.merchantId) {
      return { refusal: unsigned('ERROR', 'MerID Error') };
    }
    const missing = required.find((name) => !fields[name]);
    if (missing) return { refusal: unsigned('ERROR', `${missing} Error`) };
    if (fields.MerTradeNo !== undefined) {
      if (!/^[A-Za-z0-9_-]{1,25}$/.test(fields.MerTradeNo)) return { refusal: unsigned('ERROR', 'MerTradeNo Error') };
      if (trades.has(fields.MerTradeNo)) {
        return { refusal: unsigned('MER_TRADE_NO_DUPLICATE', 'MerTradeNo Duplicate') };
      }
    }
    if (fields.TradeAmt !== undefined && !/^[1-9][0-9]*$/.test(fields.TradeAmt)) {
      return { refusal: unsigned('ERROR', 'TradeAmt Error') };
    }
    return { fields };
  }

  function tokenGet(body: Record<string, string>, res: ServerResponse): void {
    const path = PAYUNI_PATHS.sdkToken;
    const { fields, refusal } = opened(body, ['Timestamp', 'IFrameDomain']);
    if (!fields) return host.answer(res, path, refusal);
    if (!/^https?:\/\/[^/]+$/.test(fields.IFrameDomain!))
      return host.answer(res, path, unsigned('ERROR', 'IFrameDomain Error'));
    if (
      fields.UseTokenType !== undefined &&
      (fields.UseTokenType !== '2' || !CREDIT_TOKEN.test(fields.CreditToken ?? ''))
    ) {
      return host.answer(res, path, unsigned('ERROR', 'UseTokenType or CreditToken Error'));
    }
    const token = randomBytes(24).toString('hex');
    const expiresAt = new Date(host.now().getTime() + SDK_TOKEN_MINUTES * 60_000);
    tokens.set(token, { fields, expiresAt, used: false });
    const inside = {
      Status: 'SUCCESS',
      Message: '取得 Token 成功',
      MerID: merchant.merchantId,
      Token: token,
      TokenExpired: String(Math.floor(expiresAt.getTime() / 1000)),
    };
    host.answer(res, path, sealed(inside, body.Version || '3.0'));
  }

  /** What the card fields' script posts: the card, checked and bound to the token; the CVC is not kept. */
  function bind(token: string, body: Record<string, string>, res: ServerResponse): void {
    const json = (status: number, value: unknown) =>
      void res
        .writeHead(status, { 'content-type': 'application/json', 'access-control-allow-origin': '*' })
        .end(JSON.stringify(value));
    const held = tokens.get(token);
    if (!held || held.used || held.expiresAt <= host.now()) return json(404, unsigned('ERROR', 'Token Error'));
    const number = (body.CardNo ?? '').replace(/[\s-]/g, '');
    const exp = /^(0[1-9]|1[0-2])\s*\/?\s*(\d{2})$/.exec((body.CardExp ?? '').trim());
    const expiry = exp ? parseExpiry(`${exp[1]}/${exp[2]}`) : null;
    if (!/^\d{12,19}$/.test(number) || !luhnValid(number)) return json(400, unsigned('ERROR', '卡號錯誤 (CardNo)'));
    if (!expiry || isExpired(expiry, host.now())) return json(400, unsigned('ERROR', '有效期限錯誤 (CardExp)'));
    if (!/^\d{3,4}$/.test((body.CardCvc ?? '').trim())) return json(400, unsigned('ERROR', '安全碼錯誤 (CardCvc)'));
    held.card = { number, expMonth: expiry.month, expYear: expiry.year };
    json(200, { Status: 'SUCCESS', HashTimestamp: String(Math.floor(host.now().getTime() / 1000)) });
  }

  /** Opens the trade and answers its result: paid, declined, or the 3-D Secure page. */
  function merchantTrade(body: Record<string, string>, res: ServerResponse): void {
    const path = PAYUNI_PATHS.embedTrade;
    const { fields, refusal } = opened(body, ['MerTradeNo', 'Token', 'TradeAmt', 'Timestamp']);
    if (!fields) return host.answer(res, path, refusal);
    const token = tokens.get(fields.Token!);
    const usable = token && !token.used && token.card && token.expiresAt > host.now();
    const trade = openTrade(fields, usable ? token.card : undefined);
    if (!usable) return host.answer(res, path, sealed(fail(trade, TOKEN_REFUSED)));
    const card = token.card!;
    if (card.number === TEST_CARDS.challenge) {
      token.used = true;
      return host.answer(res, path, sealed(toTheBank(trade, token)));
    }
    const declined = DECLINES[card.number];
    if (declined) return host.answer(res, path, sealed(fail(trade, declined)));
    token.used = true;
    host.answer(res, path, sealed(pay(trade, saveCard(token, card))));
  }

  /** 幕後授權: the saved card found by CreditToken and CreditHash, charged without the buyer. */
  function credit(body: Record<string, string>, res: ServerResponse): void {
    const path = PAYUNI_PATHS.credit;
    const { fields, refusal } = opened(body, ['MerTradeNo', 'TradeAmt', 'Timestamp', 'CreditToken', 'CreditHash']);
    if (!fields) return host.answer(res, path, refusal);
    const saved = savedCards.get(fields.CreditHash!);
    const found = saved && saved.creditToken === fields.CreditToken ? saved : undefined;
    const trade = openTrade(fields, found);
    if (!found) return host.answer(res, path, sealed(fail(trade, PAIR_UNKNOWN)));
    if (found.number === TEST_CARDS.attachThenDecline)
      return host.answer(res, path, sealed(fail(trade, LATER_DECLINED)));
    if (found.number === TEST_CARDS.challenge) return host.answer(res, path, sealed(toTheBank(trade)));
    host.answer(res, path, sealed(pay(trade, found)));
  }

  function challengePage(payuniTradeNo: string, res: ServerResponse): void {
    const waiting = challenges.get(payuniTradeNo);
    const trade = waiting && trades.get(waiting.tradeNo);
    if (!trade) return host.page(res, 404, html`<h1>No such 3-D Secure step</h1>`);
    host.page(
      res,
      200,
      html`<h1>3-D Secure (PAYUNi emulator): ${trade.fields.ProdDesc ?? ''} NT$${trade.fields.TradeAmt}</h1>
        <p>卡號 **** ${trade.card?.number.slice(-4) ?? ''}</p>
        <form method="post" action="/3d/${payuniTradeNo}">
          <input type="hidden" name="result" value="pass" /><button id="payuni-3d-pass">Authenticate</button>
        </form>
        <form method="post" action="/3d/${payuniTradeNo}">
          <input type="hidden" name="result" value="fail" /><button id="payuni-3d-fail">Fail</button>
        </form>`,
    );
  }

  /** The buyer's answer at the bank: the result to NotifyURL, and the browser sent to ReturnURL with it. */
  async function challengeResult(
    payuniTradeNo: string,
    result: string | undefined,
    res: ServerResponse,
  ): Promise<void> {
    const waiting = challenges.get(payuniTradeNo);
    const trade = waiting && trades.get(waiting.tradeNo);
    if (!trade || !waiting) return host.page(res, 404, html`<h1>No such 3-D Secure step</h1>`);
    if (result !== 'pass' && result !== 'fail') return host.page(res, 400, html`<h1>result is pass or fail</h1>`);
    if (!waiting.result) {
      const card = trade.card!;
      const declined = result === 'fail' ? THREE_D_FAILED : DECLINES[card.number];
      const saved = waiting.token ? saveCard(waiting.token, card) : savedCards.get(trade.fields.CreditHash ?? '');
      waiting.result = declined ? fail(trade, declined) : pay(trade, saved);
      if (trade.fields.NotifyURL) await host.notify(trade, waiting.result);
    }
    const back = trade.fields.ReturnURL;
    const fields = seal(merchant.merchantId, waiting.result, merchant);
    host.page(
      res,
      200,
      html`<h1>${waiting.result.TradeStatus === '1' ? '驗證成功' : '驗證失敗'}</h1>
        ${
          back
            ? html`<form id="payuni-return" method="post" action="${back}">
                  ${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)}
                  <noscript><button>返回商店</button></noscript>
                </form>
                ${raw(`<script>document.getElementById('payuni-return').submit();</script>`)}`
            : ''
        }`,
    );
  }

  /** The trade a card request opened (its fields the request's), failed until it is paid. */
  function openTrade(fields: Record<string, string>, card: EmulatedCard | undefined): EmulatedPayuniTrade {
    const trade: EmulatedPayuniTrade = {
      fields,
      payuniTradeNo: `${Math.floor(host.now().getTime() / 1000)}${digits(9)}`,
      status: 'unpaid',
      pending: [],
      refunds: [],
      ...(card ? { card: { number: card.number, expMonth: card.expMonth, expYear: card.expYear } } : {}),
    };
    trades.set(fields.MerTradeNo!, trade);
    return trade;
  }

  /** The answer that sends the buyer to the 3-D Secure page; the result comes when they answer there. */
  function toTheBank(trade: EmulatedPayuniTrade, token?: EmulatedSdkToken): Record<string, string> {
    challenges.set(trade.payuniTradeNo, { tradeNo: trade.fields.MerTradeNo!, token });
    return {
      Status: 'SUCCESS',
      Message: '請進行 3D 驗證',
      ...common(trade),
      URL: `${host.url()}/3d/${trade.payuniTradeNo}`,
    };
  }

  const common = (trade: EmulatedPayuniTrade) => ({
    MerID: merchant.merchantId,
    MerTradeNo: trade.fields.MerTradeNo!,
    TradeNo: trade.payuniTradeNo,
    TradeAmt: trade.fields.TradeAmt!,
    PaymentType: '1',
  });

  function fail(trade: EmulatedPayuniTrade, why: { Status: string; Message: string }): Record<string, string> {
    trade.status = 'failed';
    return { ...why, ...common(trade), TradeStatus: '2' };
  }

  function pay(trade: EmulatedPayuniTrade, saved: EmulatedSavedCard | undefined): Record<string, string> {
    trade.status = 'paid';
    trade.paidAt = host.now();
    const when = payuniDateTime(trade.paidAt);
    const card = trade.card!;
    return {
      Status: 'SUCCESS',
      Message: '授權成功',
      ...common(trade),
      TradeStatus: '1',
      Card6No: card.number.slice(0, 6),
      Card4No: card.number.slice(-4),
      AuthCode: digits(6),
      AuthDay: when.slice(0, 10).replaceAll('-', ''),
      AuthTime: when.slice(11).replaceAll(':', ''),
      ResCode: '00',
      AuthType: '1',
      ...(saved
        ? {
            CreditHash: saved.creditHash,
            CreditLife: `${String(saved.expMonth).padStart(2, '0')}${String(saved.expYear % 100).padStart(2, '0')}`,
          }
        : {}),
    };
  }

  /** For a token made with UseTokenType 2: the card saved under its CreditToken (one CreditHash per card). */
  function saveCard(token: EmulatedSdkToken, card: EmulatedCard): EmulatedSavedCard | undefined {
    if (token.fields.UseTokenType !== '2' || !token.fields.CreditToken) return undefined;
    const creditToken = token.fields.CreditToken;
    const known = [...savedCards.values()].find((s) => s.creditToken === creditToken && s.number === card.number);
    if (known) return known;
    const saved = { ...card, creditToken, creditHash: randomBytes(16).toString('hex').toUpperCase() };
    savedCards.set(saved.creditHash, saved);
    return saved;
  }

  /** Handles the request if it is the embed side's; false otherwise. */
  async function handle(method: string, path: string, body: Record<string, string>, res: ServerResponse) {
    const bindTo = /^\/sdk\/bind\/([^/]+)$/.exec(path)?.[1];
    const challenge = /^\/3d\/([0-9]+)$/.exec(path)?.[1];
    if (method === 'GET' && path === '/sdk/uni-payment.js') {
      res
        .writeHead(200, {
          'content-type': 'application/javascript; charset=utf-8',
          'access-control-allow-origin': '*',
          'cache-control': 'no-cache',
        })
        .end(uniPaymentScript(`${host.url()}/sdk/bind/`));
    } else if (bindTo && method === 'OPTIONS') {
      res
        .writeHead(204, {
          'access-control-allow-origin': '*',
          'access-control-allow-methods': 'POST',
          'access-control-allow-headers': 'Content-Type',
        })
        .end();
    } else if (bindTo && method === 'POST') bind(decodeURIComponent(bindTo), body, res);
    else if (challenge && method === 'GET') challengePage(challenge, res);
    else if (challenge && method === 'POST') await challengeResult(challenge, body.result, res);
    else if (method === 'POST' && path === PAYUNI_PATHS.sdkToken) tokenGet(body, res);
    else if (method === 'POST' && path === PAYUNI_PATHS.embedTrade) merchantTrade(body, res);
    else if (method === 'POST' && path === PAYUNI_PATHS.credit) credit(body, res);
    else return false;
    return true;
  }

  return { tokens, savedCards, handle };
}

const digits = (n: number) => Array.from({ length: n }, () => randomInt(10)).join('');

/**
 * The emulator's `uni-payment.js`, in the shape the recur-tw SDK drives PAYUNi's:
 * `window.UniPayment.createSession(token, { env, elements: { CardNo, CardExp, CardCvc } })`,
 * `start()` fills the three elements with inputs, `onUpdate(listener)` hears
 * `{ status: { CardNo, CardExp, CardCvc } }` on every change, and `getTradeResult()` binds the
 * card to the token at the emulator (never at the merchant) and resolves with its answer.
 */
function uniPaymentScript(bindBase: string): string {
  return `(function () {
  var BIND = ${JSON.stringify(bindBase)};
  var FIELDS = {
    CardNo: { placeholder: '4242 4242 4242 4242', auto: 'cc-number', ok: function (v) { return /^[0-9 ]{12,23}$/.test(v); } },
    CardExp: { placeholder: 'MM/YY', auto: 'cc-exp', ok: function (v) { return /^(0[1-9]|1[0-2])\\s*\\/?\\s*[0-9]{2}$/.test(v); } },
    CardCvc: { placeholder: 'CVC', auto: 'cc-csc', ok: function (v) { return /^[0-9]{3,4}$/.test(v); } }
  };
  function createSession(token, options) {
    var inputs = {};
    var listeners = [];
    function status() {
      var s = {};
      Object.keys(FIELDS).forEach(function (k) { s[k] = !!inputs[k] && FIELDS[k].ok(inputs[k].value.trim()); });
      return s;
    }
    function changed() { var s = { status: status() }; listeners.forEach(function (l) { l(s); }); }
    return {
      start: function () {
        var keys = Object.keys(FIELDS);
        for (var i = 0; i < keys.length; i++) {
          var k = keys[i];
          var holder = document.getElementById(options.elements[k]);
          if (!holder) return Promise.reject(new Error('UniPayment: element not found: ' + options.elements[k]));
          var input = document.createElement('input');
          input.setAttribute('data-payuni-field', k);
          input.setAttribute('inputmode', 'numeric');
          input.setAttribute('autocomplete', FIELDS[k].auto);
          input.placeholder = FIELDS[k].placeholder;
          input.style.cssText = 'width:100%;border:0;outline:0;font:inherit;background:transparent;padding:0;';
          input.addEventListener('input', changed);
          holder.innerHTML = '';
          holder.appendChild(input);
          inputs[k] = input;
        }
        setTimeout(changed, 0);
        return Promise.resolve();
      },
      onUpdate: function (listener) { listeners.push(listener); },
      getTradeResult: function () {
        var body = new URLSearchParams();
        Object.keys(FIELDS).forEach(function (k) { body.set(k, inputs[k] ? inputs[k].value.trim() : ''); });
        return fetch(BIND + encodeURIComponent(token), { method: 'POST', body: body })
          .then(function (r) { return r.json(); })
          .catch(function () { return { Status: 'ERROR', Message: 'The card fields could not reach PAYUNi' }; });
      }
    };
  }
  window.UniPayment = { createSession: createSession };
})();
`;
}
