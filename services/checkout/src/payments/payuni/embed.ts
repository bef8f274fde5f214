import { PAYUNI_PATHS, PAYUNI_PRODUCTION_URL, PAYUNI_SANDBOX_URL, type PayuniMerchant } from './merchant';
import { openNotification } from './notifications';
import { postSealed } from './post';

/**
 * PAYUNi's UNi Embed and token charges, as integrations that run against PAYUNi drive them (the
 * recur-tw SDK for the browser side; PAYUNi's own API document could not be read):
 *
 * 1. `requestSdkToken`: /api/iframe/token_get (Version 3.0) gives an SDK token for one page origin;
 * 2. PAYUNi's `uni-payment.js` shows the card fields in that page and binds the card typed there
 *    to the token at PAYUNi (`getTradeResult`): the card never reaches the merchant's server;
 * 3. `authorizeEmbeddedCard`: /api/iframe/merchant_trade charges the card bound to the token;
 * 4. `chargeCreditToken`: /api/credit (幕後授權) charges a saved card later, without the buyer,
 *    by the CreditToken given at step 1 and the CreditHash PAYUNi gave at step 3.
 */

/** Where PAYUNi serves the browser script that shows the card fields (`window.UniPayment`). */
export const PAYUNI_SDK_SCRIPT_URLS = {
  sandbox: 'https://sandbox-vendor.payuni.com.tw/sdk/uni-payment.js',
  production: 'https://vendor.payuni.com.tw/sdk/uni-payment.js',
} as const;

/** What a page needs to show PAYUNi's card fields. */
export type PayuniCardFields = { sdkToken: string; scriptUrl: string; env: 'S' | 'P' };

/** Where PAYUNi serves its card-field script for an API address: its own two, or an emulator's. */
export function payuniScriptUrl(baseUrl: string): string {
  if (baseUrl === PAYUNI_PRODUCTION_URL) return PAYUNI_SDK_SCRIPT_URLS.production;
  if (baseUrl === PAYUNI_SANDBOX_URL) return PAYUNI_SDK_SCRIPT_URLS.sandbox;
  return `${baseUrl.replace(/\/$/, '')}/sdk/uni-payment.js`;
}

/** token_get is Version 3.0; merchant_trade and credit are 1.0. */
export const SDK_TOKEN_VERSION = '3.0';
export const CARD_TRADE_VERSION = '1.0';

/** CreditToken: the payer's id at the merchant, at most 150 of `A-Za-z0-9@.#$%_-`. */
const CREDIT_TOKEN = /^[A-Za-z0-9@.#$%_-]{1,150}$/;
/** MerTradeNo: at most 25 of `A-Za-z0-9_-` (the copied UPP tables). */
const TRADE_NO = /^[A-Za-z0-9_-]{1,25}$/;

/** The card PAYUNi charged: what it shows of it, and for a saved card its CreditHash and expiry (CreditLife). */
export type PayuniCard = {
  last4: string;
  first6: string | null;
  creditHash: string | null;
  expMonth: number | null;
  expYear: number | null;
};

/**
 * What a card charge came to: paid; the buyer must pass 3-D Secure at `url` first (the result
 * then comes to NotifyURL and ReturnURL); or declined, with PAYUNi's Status lower-cased as the
 * code and its Message.
 */
export type PayuniCardOutcome =
  | { status: 'paid'; payuniTradeNo: string; amount: number; card: PayuniCard }
  | { status: 'requires_3d'; url: string }
  | { status: 'declined'; code: string; message: string };

/**
 * No answer that can be trusted about a charge (network, timeout, HTTP status, not JSON, an
 * unsigned error, a HashInfo or GCM tag that does not check, a SUCCESS without TradeNo, a result
 * PAYUNi does not know yet): the card may have been charged. Ask `queryPayuniTrade` by
 * MerTradeNo; never read it as declined. From `requestSdkToken` it means no token: nothing was
 * charged, ask again.
 */
export class CardChargeUnanswered extends Error {}

/** Options of every call: a fetch to use instead of the global one, and how long to wait. */
export type PayuniCallOptions = { fetch?: typeof fetch; timeoutMs?: number };

/** PAYUNi waits up to 60 s for the bank before it answers UNKNOWN (notifications.ts): a charge waits longer. */
const CHARGE_TIMEOUT_MS = 70_000;

/**
 * An SDK token for PAYUNi's card fields on the page at `iframeDomain` (an origin). With a
 * `creditToken` (the payer's id at the merchant) the card is saved for charges without the
 * buyer (UseTokenType 2, 約定): the first paid charge answers its CreditHash. Throws a plain
 * Error on a request PAYUNi would refuse, before any call, and on a verified refusal;
 * `CardChargeUnanswered` when there is no answer to trust.
 */
export async function requestSdkToken(
  merchant: PayuniMerchant,
  request: { iframeDomain: string; creditToken?: string },
  now: Date,
  options: PayuniCallOptions = {},
): Promise<{ sdkToken: string; expiresAt: Date | null }> {
  assertOrigin(request.iframeDomain);
  if (request.creditToken !== undefined) assertCreditToken(request.creditToken);
  const inside = await postSealed(
    merchant,
    PAYUNI_PATHS.sdkToken,
    SDK_TOKEN_VERSION,
    {
      MerID: merchant.merchantId,
      Timestamp: unixSeconds(now),
      IFrameDomain: request.iframeDomain,
      ...(request.creditToken !== undefined ? { UseTokenType: '2', CreditToken: request.creditToken } : {}),
    },
    { ...options, timeoutMs: options.timeoutMs ?? 10_000 },
    CardChargeUnanswered,
  );
  if (inside.Status !== 'SUCCESS') {
    throw new Error(`PAYUNi refused an SDK token: ${inside.Status ?? ''} ${inside.Message ?? ''}`.trim());
  }
  if (!inside.Token) throw new CardChargeUnanswered('token_get answered SUCCESS without a Token');
  const expires = Number(inside.TokenExpired);
  return {
    sdkToken: inside.Token,
    expiresAt: inside.TokenExpired && Number.isSafeInteger(expires) ? new Date(expires * 1000) : null,
  };
}

/** The order charged to the card bound to an SDK token (merchant_trade). */
export interface EmbeddedCardOrder {
  sdkToken: string;
  /** MerTradeNo: one trade per charge key (`payuniTradeNo`). */
  tradeNo: string;
  /** Integer TWD, more than 0. */
  amount: number;
  /** ProdDesc. */
  description: string;
  email?: string;
  /** Where the buyer's browser brings the 3-D Secure result back (not to be trusted alone). */
  returnUrl: string;
  /** Where PAYUNi posts the 3-D Secure result server to server. */
  notifyUrl: string;
  /** API3D=1: ask the bank for 3-D Secure. */
  threeDSecure: boolean;
}

/** Charges the card the buyer bound to `order.sdkToken` in PAYUNi's card fields (/api/iframe/merchant_trade). */
export async function authorizeEmbeddedCard(
  merchant: PayuniMerchant,
  order: EmbeddedCardOrder,
  now: Date,
  options: PayuniCallOptions = {},
): Promise<PayuniCardOutcome> {
  assertTrade(order.tradeNo, order.amount);
  if (!order.sdkToken) throw new Error('No SDK token');
  const inside = await postSealed(
    merchant,
    PAYUNI_PATHS.embedTrade,
    CARD_TRADE_VERSION,
    {
      MerID: merchant.merchantId,
      MerTradeNo: order.tradeNo,
      Token: order.sdkToken,
      TradeAmt: String(order.amount),
      Timestamp: unixSeconds(now),
      ProdDesc: order.description.slice(0, 200),
      ReturnURL: order.returnUrl,
      NotifyURL: order.notifyUrl,
      ...(order.email ? { UsrMail: order.email } : {}),
      ...(order.threeDSecure ? { API3D: '1' } : {}),
    },
    { ...options, timeoutMs: options.timeoutMs ?? CHARGE_TIMEOUT_MS },
    CardChargeUnanswered,
  );
  return outcomeFor(inside, order.tradeNo, order.amount);
}

/** A charge of a saved card without the buyer (renewals). */
export interface CreditTokenCharge {
  tradeNo: string;
  amount: number;
  description: string;
  /** The CreditToken the card was saved under (`requestSdkToken`). */
  creditToken: string;
  /** The CreditHash PAYUNi answered at the card's first paid charge. */
  creditHash: string;
}

/**
 * Charges a saved card by CreditToken and CreditHash (/api/credit, 幕後授權). When the bank asks
 * for the buyer (PAYUNi answers a URL), it is declined as `authentication_required`.
 */
export async function chargeCreditToken(
  merchant: PayuniMerchant,
  order: CreditTokenCharge,
  now: Date,
  options: PayuniCallOptions = {},
): Promise<PayuniCardOutcome> {
  assertTrade(order.tradeNo, order.amount);
  assertCreditToken(order.creditToken);
  if (!order.creditHash) throw new Error('No CreditHash: the card was never charged with a CreditToken');
  const inside = await postSealed(
    merchant,
    PAYUNI_PATHS.credit,
    CARD_TRADE_VERSION,
    {
      MerID: merchant.merchantId,
      MerTradeNo: order.tradeNo,
      TradeAmt: String(order.amount),
      Timestamp: unixSeconds(now),
      ProdDesc: order.description.slice(0, 200),
      CreditToken: order.creditToken,
      CreditHash: order.creditHash,
    },
    { ...options, timeoutMs: options.timeoutMs ?? CHARGE_TIMEOUT_MS },
    CardChargeUnanswered,
  );
  const outcome = outcomeFor(inside, order.tradeNo, order.amount);
  if (outcome.status !== 'requires_3d') return outcome;
  return {
    status: 'declined',
    code: 'authentication_required',
    message: 'The bank asks for the buyer (3-D Secure): charge with the buyer present',
  };
}

/**
 * A card result inside a verified answer or notification (merchant_trade, credit, or the
 * 3-D Secure result): Status other than SUCCESS is declined, its Status lower-cased the code;
 * SUCCESS with a URL asks for 3-D Secure; SUCCESS with TradeNo and TradeStatus 1 is paid. Throws
 * `CardChargeUnanswered` for anything else (UNKNOWN, TradeStatus 8, a SUCCESS without TradeNo or
 * not paid): the trade query settles it.
 */
export function readCardResult(inside: Record<string, string>): PayuniCardOutcome {
  const status = inside.Status ?? '';
  if (!status) throw new CardChargeUnanswered('The card result has no Status');
  if (status.toUpperCase() === 'UNKNOWN' || inside.TradeStatus === '8') {
    throw new CardChargeUnanswered(`PAYUNi does not know the result yet (${status}): ask the trade query`);
  }
  if (status !== 'SUCCESS') return { status: 'declined', code: status.toLowerCase(), message: inside.Message ?? '' };
  if (inside.URL) return { status: 'requires_3d', url: httpUrl(inside.URL) };
  if (!inside.TradeNo) throw new CardChargeUnanswered('A SUCCESS without TradeNo');
  if (inside.TradeStatus !== '1') {
    throw new CardChargeUnanswered(`A SUCCESS with TradeStatus ${inside.TradeStatus ?? 'none'}: ask the trade query`);
  }
  const amount = Number(inside.TradeAmt);
  if (!Number.isSafeInteger(amount)) throw new CardChargeUnanswered('A paid card result without TradeAmt');
  return { status: 'paid', payuniTradeNo: inside.TradeNo, amount, card: cardOf(inside) };
}

/**
 * A card's result after 3-D Secure, posted to NotifyURL (or brought by the buyer's browser to
 * ReturnURL, to be confirmed by the trade query): `RejectedNotification` when it is not
 * PAYUNi's for this merchant, `CardChargeUnanswered` when PAYUNi does not know the result yet.
 */
export function readCardNotification(
  body: Record<string, unknown>,
  merchant: PayuniMerchant,
): { tradeNo: string; outcome: PayuniCardOutcome } {
  const inside = openNotification(body, merchant);
  const status = inside.Status ?? (typeof body.Status === 'string' ? body.Status : undefined);
  return { tradeNo: inside.MerTradeNo!, outcome: readCardResult({ ...inside, ...(status ? { Status: status } : {}) }) };
}

/** The card of a paid result: Card6No, Card4No, and for a saved card CreditHash and CreditLife (MMYY). */
function cardOf(inside: Record<string, string>): PayuniCard {
  const life = /^(0[1-9]|1[0-2])(\d{2})$/.exec(inside.CreditLife ?? '');
  return {
    last4: inside.Card4No ?? '',
    first6: inside.Card6No || null,
    creditHash: inside.CreditHash || null,
    expMonth: life ? Number(life[1]) : null,
    expYear: life ? 2000 + Number(life[2]) : null,
  };
}

/** The outcome of a charge, once the answer is known to be about this trade and, when paid, this amount. */
function outcomeFor(inside: Record<string, string>, tradeNo: string, amount: number): PayuniCardOutcome {
  if (inside.MerTradeNo !== undefined && inside.MerTradeNo !== tradeNo) {
    throw new CardChargeUnanswered(`PAYUNi answered about another trade (${inside.MerTradeNo})`);
  }
  const outcome = readCardResult(inside);
  if (outcome.status === 'paid' && outcome.amount !== amount) {
    throw new CardChargeUnanswered(`PAYUNi answered paid for ${outcome.amount}, not ${amount}: ask the trade query`);
  }
  return outcome;
}

function assertTrade(tradeNo: string, amount: number): void {
  if (!TRADE_NO.test(tradeNo)) throw new Error('A PAYUNi MerTradeNo is at most 25 of A-Za-z0-9_-');
  if (!Number.isSafeInteger(amount) || amount <= 0) {
    throw new RangeError(`A PAYUNi trade is a positive integer of TWD, not ${amount}`);
  }
}

function assertCreditToken(creditToken: string): void {
  if (!CREDIT_TOKEN.test(creditToken)) throw new Error('A PAYUNi CreditToken is at most 150 of A-Za-z0-9@.#$%_-');
}

/**
 * IFrameDomain: the origin of the page that shows the card fields, without a path. http is let
 * through (a page on loopback against the emulator); whether PAYUNi takes it is PAYUNi's to say.
 */
function assertOrigin(origin: string): void {
  let url: URL | null = null;
  try {
    url = new URL(origin);
  } catch {
    // Refused below.
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.origin !== origin) {
    throw new Error(`IFrameDomain is the origin of the card page (https://shop.example), not ${origin}`);
  }
}

/** The 3-D Secure address PAYUNi answers, refused unless it is a web address. */
function httpUrl(text: string): string {
  try {
    if (/^https?:$/.test(new URL(text).protocol)) return text;
  } catch {
    // Refused below.
  }
  throw new CardChargeUnanswered('The 3-D Secure URL is not a web address');
}

const unixSeconds = (now: Date) => String(Math.floor(now.getTime() / 1000));
