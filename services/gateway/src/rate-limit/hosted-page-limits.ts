import type { ApiError } from '@billing/contracts';
import type { Request, RequestHandler, Response } from 'express';
import { HOSTED_PAGE_LIMITS } from './limits';
import { rateLimit, type RateLimitRule } from './middleware';
import type { RateLimitStore } from './store';

/** A card sent from the customer portal counts as a pay attempt: card testing is the same risk. */
const PORTAL_CARD_PATH = /^\/portal\/[^/]+\/[^/]+\/payment_method$/;

/** A hosted page's payment or code, the sandbox card form's card, the SDK's keyless coupon call. */
const PAY_ATTEMPT_PATH = /^\/(checkout\/|sandbox\/card-form\/|embed\/checkouts\/)/;

/** A processor's server-to-server posts about a checkout's trade: checked by their MAC, not limited as a buyer's. */
const PROCESSOR_NOTIFICATION_PATH = /^\/checkout\/[^/]+\/(ecpay|payuni)\/[^/]+$/;

/** Reads of a checkout page cost nothing; a visit to a payment link opens a session, a POST pays. */
function ruleFor(req: Request, override?: number): RateLimitRule | undefined {
  const ip = req.ip ?? 'unknown';
  if (PROCESSOR_NOTIFICATION_PATH.test(req.path)) return undefined;
  const { payAttemptsPerIp, paymentLinkVisitsPerIp } = HOSTED_PAGE_LIMITS;
  // Entering a card (the portal's, or the sandbox card form of an embedded checkout) or a code
  // (the hosted page's field, the SDK's coupon box) counts as a pay attempt.
  if (req.method === 'POST' && (PAY_ATTEMPT_PATH.test(req.path) || PORTAL_CARD_PATH.test(req.path))) {
    return { bucket: `pay-ip:${ip}`, ...payAttemptsPerIp, limit: override ?? payAttemptsPerIp.limit };
  }
  if (req.method === 'GET' && /^\/pay\/[^/]+$/.test(req.path)) {
    return {
      bucket: `link-visit-ip:${ip}`,
      ...paymentLinkVisitsPerIp,
      limit: override ?? paymentLinkVisitsPerIp.limit,
    };
  }
  return undefined;
}

/** A buyer's browser gets a page; a script calling `/checkout/:id/pay` gets the JSON envelope. */
function refuse(req: Request, res: Response, error: ApiError) {
  res.status(error.status);
  if (req.accepts(['json', 'html']) !== 'html') {
    res.json(error.toEnvelope());
    return;
  }
  res
    .type('html')
    .send(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Too many attempts</title></head>' +
        '<body><main><h1>Too many attempts</h1><p>Please wait a minute and try again.</p></main></body></html>',
    );
}

/** The per-IP limits of the key-less hosted pages (`HOSTED_PAGE_LIMITS`). */
export function hostedPageLimits(
  store: RateLimitStore,
  now: () => number,
  onError: (error: unknown) => void,
  /** `RATE_LIMIT_PER_MINUTE_OVERRIDE`, for benchmarks and tests that pay many times. */
  override?: number,
): RequestHandler {
  return rateLimit({ store, now, onError, refuse, limitFor: (req) => ruleFor(req, override) });
}
