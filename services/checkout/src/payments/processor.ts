import type { Environment } from '@billing/contracts';

export interface CardInput {
  number: string;
  /** MM/YY */
  exp: string;
  cvc: string;
}

/**
 * A card entered in the payment provider's card form for an embedded checkout, as the provider
 * keeps it for the checkout to charge: how it will answer and what a buyer may be shown, never
 * the number or the CVC (docs/embedded-checkout.md).
 */
export interface CollectedCard {
  behaviour: 'ok' | 'declines' | 'challenge' | 'card_declined' | 'insufficient_funds' | 'expired_card';
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
}

export interface ChargeRequest {
  /**
   * One key is charged at most once, however often it is asked: a repeat answers the first
   * charge. Checkout keys by the payment intent and the number of attempts the processor
   * definitively declined (`chargeKeyOf`), so a retry after a crash or a lost answer can never
   * charge twice (docs/decisions/0006-one-charge-per-session.md).
   */
  idempotencyKey: string;
  environment: Environment;
  /** Integer TWD; 0 verifies and saves the card (SETUP mode). */
  amount: number;
  /** Typed on the hosted page, or entered in the card form of an embedded checkout. */
  card: CardInput | CollectedCard;
  /** The buyer's answer to a challenge step (3-D Secure), on the second call. */
  challenge?: 'pass' | 'fail';
  now: Date;
}

/** A card the processor keeps for later charges: its reference (`pm_`) and what a buyer may be shown. */
export type SavedCard = { id: string; brand: string; last4: string; exp_month: number; exp_year: number };

export type ChargeResult =
  | { status: 'succeeded'; payment_method: SavedCard }
  | { status: 'requires_action'; next_action: { type: 'challenge' } }
  | { status: 'declined'; code: string; message: string };

/** A charge of a saved card without the buyer (a renewal): same key rule as `ChargeRequest`. */
export interface SavedCardChargeRequest {
  idempotencyKey: string;
  environment: Environment;
  /** Integer TWD, more than 0. */
  amount: number;
  paymentMethodId: string;
  now: Date;
}

export interface RefundRequest {
  /**
   * One refund per key, however often it is asked: the refund id (`re_`), or the order id for
   * billing's duplicate-subscription refund. A retry after a lost answer gets the first refund.
   */
  idempotencyKey: string;
  environment: Environment;
  /** The idempotency key the refunded charge was made under (`chargeKeyOf`, or `<invoice id>:<attempt>`). */
  chargeKey: string;
  /** Integer TWD, more than 0, at most what the charge has left to refund (checkout checks it). */
  amount: number;
  now: Date;
}

/**
 * A refund's answer: made, refused, or `deferred`: the processor cannot make it before `until`
 * (PAYUNi gives back part of a card payment only once it is captured); the refund stays pending
 * and is asked again from then.
 */
export type RefundResult =
  | { status: 'succeeded'; refund_id: string }
  | { status: 'failed'; message: string }
  | { status: 'deferred'; message: string; until: Date };

/** The payment-processor port: the sandbox simulator here, a real acquirer's adapter later. */
export interface PaymentProcessor {
  readonly name: string;
  /** Whether it may move money in this environment; a refusal is 402 with its reason. */
  refusal(environment: Environment): string | null;
  charge(request: ChargeRequest): Promise<ChargeResult>;
  /** Charges a card saved by an earlier `charge` (its `payment_method.id`), off-session. */
  chargeSavedCard(request: SavedCardChargeRequest): Promise<ChargeResult>;
  /**
   * Many such charges at once (a batch of renewals), each once per key as `chargeSavedCard`;
   * answers in the order asked. Optional: without it each is charged on its own.
   */
  chargeSavedCards?(requests: SavedCardChargeRequest[]): Promise<ChargeResult[]>;
  /**
   * The final answer already given to this key, or null when the key was never charged (or
   * only asked for a challenge). The expiry sweep asks before it expires a session whose last
   * charge has no recorded outcome.
   */
  lookup(idempotencyKey: string): Promise<ChargeResult | null>;
  /**
   * Gives up a key that has no final answer: a charge asked under it later charges nothing and
   * answers the release (declined, `attempt_released`). Returns the key's final answer, which
   * is the charge's when the charge came first. Only for an attempt old enough that no call of
   * its own can still be under way (docs/lost-answers.md).
   */
  release(idempotencyKey: string): Promise<ChargeResult>;
  refund(request: RefundRequest): Promise<RefundResult>;
  /**
   * The provider's card form (embedded checkouts): checks a card entered there and keeps what
   * charging it needs. Optional: a provider whose card form lives on its own side has none here.
   */
  collect?(
    card: CardInput,
    now: Date,
  ): { status: 'collected'; card: CollectedCard } | { status: 'declined'; code: string; message: string };
}
