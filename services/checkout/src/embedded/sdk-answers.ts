import { ApiError, RECUR_SDK_HEADER, type SdkCouponDiscount, sdkRefusalBody } from '@billing/contracts';
import type { ErrorRequestHandler, Request } from 'express';
import { chooseLocale, messagesFor, refusalText } from '../hosted-page/messages';
import type { Session } from '../sessions/session';

/**
 * The recur-tw SDK (0.11) reads refusals of its own calls in its own ways, none of them the error
 * envelope (docs/embedded-checkout.md, "Answers to the recur-tw SDK"):
 * - `react`, its React hook: a declined payment is `200 { success: false, failure }` (it shows
 *   `failure.message` in its card form); any other refusal throws `Error(body.error)`;
 * - `bundle`, its browser bundle and the button scripts: a refusal must not be 2xx (a 2xx is
 *   taken as paid) and is read as `body.details || body.error`, `body.error.message || body.error`
 *   or `body.error`, so every one of those is the refusal's text.
 */
export type SdkDialect = 'react' | 'bundle';

/** Null for every other client, which gets the error envelope. */
export function sdkDialectOf(req: Request): SdkDialect | null {
  if (req.get(RECUR_SDK_HEADER) !== '1') return null;
  return req.get('x-recur-sdk-type') === 'react' ? 'react' : 'bundle';
}

/** Whether a buyer may pay again after this refusal: another card may do; a shop that cannot take payments will not. */
const PROCESSOR_REFUSALS = new Set(['processor_not_configured', 'processor_unavailable']);

/** Decline codes in the SDK's own words (its `PaymentFailureCode`), which its `onPaymentFailed` examples test. */
const SDK_FAILURE_CODES: Record<string, string> = {
  card_declined: 'CARD_DECLINED',
  insufficient_funds: 'INSUFFICIENT_FUNDS',
  expired_card: 'EXPIRED_CARD',
  incorrect_number: 'INVALID_CARD',
  invalid_expiry: 'INVALID_CARD',
  incorrect_cvc: 'INVALID_CARD',
  authentication_failed: 'UNAPPROVED',
  processor_declined: 'CARD_DECLINED',
};

/**
 * Mounted after the embedded-checkout routes: their refusals to the SDK in the shapes it reads,
 * in the buyer's language (their browser's), so a declined card reaches the buyer as a decline.
 */
export const answerSdkRefusals: ErrorRequestHandler = (err, req, res, next) => {
  const dialect = sdkDialectOf(req);
  if (!dialect || !(err instanceof ApiError)) return next(err);
  const text = sdkRefusalText(err, req);
  const code = detailCode(err) ?? err.code;
  const declined = err.status === 402 && req.path.endsWith('/pay');
  const failure = declined
    ? { code: SDK_FAILURE_CODES[code] ?? code.toUpperCase(), message: text, can_retry: !PROCESSOR_REFUSALS.has(code) }
    : undefined;
  if (dialect === 'react' && failure) {
    res.status(200).json({ success: false, failure });
    return;
  }
  res.status(err.status).json({ ...sdkRefusalBody(err, text), ...(failure && { failure }) });
};

const detailCode = (error: ApiError): string | undefined => {
  const code = (error.details?.[0] as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
};

/** A decline in the buyer's language; the one refusal the SDK's `checkout.js` causes itself, explained. */
function sdkRefusalText(error: ApiError, req: Request): string {
  if (req.get('x-recur-sdk-type') === 'checkout.js' && req.method === 'POST' && isMissingProduct(error)) {
    return (
      'This checkout button links to its product by slug, which checkout.js (recur-tw 0.11) does not send: ' +
      "link it to /buy/<the product's id> (prod_...) instead"
    );
  }
  return refusalText(error, messagesFor(chooseLocale(null, req.get('accept-language'))));
}

const isMissingProduct = (error: ApiError) =>
  error.status === 422 && error.details?.some((detail) => (detail as { path?: unknown }).path === 'product_id');

/** The applied code in the words of the SDK's coupon box; null when none is applied. */
export function toSdkDiscount(session: Session): SdkCouponDiscount | null {
  const { coupon, promotion_code: code, product } = session;
  if (!coupon || !code) return null;
  return {
    code,
    couponName: session.coupon_name ?? null,
    discountType: coupon.discount_type,
    discountAmount: session.order.discount_amount,
    duration: coupon.duration === 'once' ? 'ONCE' : coupon.duration === 'repeating' ? 'REPEATING' : 'FOREVER',
    durationMonths: coupon.duration_in_months,
    bonusTrialDays: session.discount?.bonus_trial_days ?? 0,
    bonusMonths: coupon.bonus_months ?? 0,
    productInterval: product.interval,
    productIntervalCount: product.interval_count,
    productPrice: product.price,
  };
}
