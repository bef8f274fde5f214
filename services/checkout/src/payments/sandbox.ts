import { createHash } from 'node:crypto';
import { randomBase62 } from '@billing/contracts';
import type {
  CardInput,
  ChargeRequest,
  ChargeResult,
  CollectedCard,
  PaymentProcessor,
  RefundRequest,
  RefundResult,
  SavedCardChargeRequest,
} from './processor';

/**
 * Test cards, after the numbers developers know from Stripe. Any other number that passes the
 * Luhn check succeeds like 4242...; one that fails it is declined as `incorrect_number`.
 */
export const TEST_CARDS = {
  success: '4242424242424242',
  genericDecline: '4000000000000002',
  insufficientFunds: '4000000000009995',
  expiredCard: '4000000000000069',
  challenge: '4000000000003220',
  /** Pays now and is saved, but every later charge without the buyer is declined. */
  attachThenDecline: '4000000000000341',
} as const;

/**
 * How a saved sandbox card answers later charges, written into its reference
 * (`pm_sandbox_<behaviour>_<random>`) so that the simulator keeps no card data: the number
 * decides it once, at the first charge.
 */
const SAVED_CARD_BEHAVIOUR: Record<string, string> = {
  [TEST_CARDS.attachThenDecline]: 'declines',
};
const SAVED_CARD_DECLINES: Record<string, { code: string; message: string }> = {
  declines: { code: 'card_declined', message: 'Your card was declined.' },
};

/** What a released key answers (`PaymentProcessor.release`): nothing was charged under it, nor will be. */
const RELEASED: ChargeResult = {
  status: 'declined',
  code: 'attempt_released',
  message: 'The attempt was given up before it was charged',
};

const DECLINES: Record<string, { code: string; message: string }> = {
  [TEST_CARDS.genericDecline]: { code: 'card_declined', message: 'Your card was declined.' },
  [TEST_CARDS.insufficientFunds]: { code: 'insufficient_funds', message: 'Your card has insufficient funds.' },
  [TEST_CARDS.expiredCard]: { code: 'expired_card', message: 'Your card has expired.' },
};

export function luhnValid(number: string): boolean {
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let digit = Number(number[number.length - 1 - i]);
    if (i % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return number.length >= 12 && sum % 10 === 0;
}

/** MM/YY to month and full year; valid through the last day of that month (UTC). */
export function parseExpiry(exp: string): { month: number; year: number } | null {
  const match = /^(0[1-9]|1[0-2])\s*\/\s*([0-9]{2})$/.exec(exp.trim());
  return match ? { month: Number(match[1]), year: 2000 + Number(match[2]) } : null;
}

export function isExpired(exp: { month: number; year: number }, now: Date): boolean {
  return now.getTime() >= Date.UTC(exp.year, exp.month, 1);
}

const brandOf = (number: string) =>
  number.startsWith('4') ? 'visa' : /^5[1-5]/.test(number) ? 'mastercard' : number.startsWith('3') ? 'amex' : 'unknown';

/**
 * Where the simulator keeps its final answers by idempotency key, as a real processor does on
 * its side: `remember` keeps the first answer given to a key and returns it, whoever asked first.
 */
export interface ChargeLedger {
  find(key: string): Promise<ChargeResult | null>;
  /** Stores `result` unless the key has one already; returns the one kept. */
  remember(key: string, result: ChargeResult): Promise<ChargeResult>;
  /** `find` for many keys at once: the answers kept, by key (absent when none). */
  findMany(keys: string[]): Promise<Map<string, ChargeResult>>;
  /** `remember` for many keys at once (each named once): the answers kept, by key. */
  rememberMany(entries: Array<[string, ChargeResult]>): Promise<Map<string, ChargeResult>>;
}

/** A refund the simulator made: the first one asked under its key, whatever is asked later. */
export type SandboxRefund = { idempotency_key: string; charge_key: string; amount: number; refund_id: string };

/** Where the simulator keeps its refunds by idempotency key (first insert wins), like its charges. */
export interface RefundLedger {
  remember(refund: SandboxRefund): Promise<SandboxRefund>;
}

export function memoryRefundLedger(): RefundLedger {
  const refunds = new Map<string, SandboxRefund>();
  return {
    remember: async (refund) => {
      if (!refunds.has(refund.idempotency_key)) refunds.set(refund.idempotency_key, refund);
      return refunds.get(refund.idempotency_key)!;
    },
  };
}

/** A ledger in memory, for unit tests and a checkout without a database. */
export function memoryChargeLedger(): ChargeLedger {
  const results = new Map<string, ChargeResult>();
  const remember = (key: string, result: ChargeResult) => {
    if (!results.has(key)) results.set(key, result);
    return results.get(key)!;
  };
  return {
    find: async (key) => results.get(key) ?? null,
    remember: async (key, result) => remember(key, result),
    findMany: async (keys) => new Map(keys.flatMap((key) => (results.has(key) ? [[key, results.get(key)!]] : []))),
    rememberMany: async (entries) => new Map(entries.map(([key, result]) => [key, remember(key, result)])),
  };
}

/**
 * The bundled simulator: outcomes depend only on the card, the expiry against the clock and
 * the challenge answer, so they are deterministic. A key's final answer is kept in its ledger
 * (in the service's database: `sandboxChargeLedger`), so the same key gets the same answer
 * after a restart too. It refuses Production unless configured for a demo
 * (`SANDBOX_PROCESSOR_IN_PRODUCTION=demo`).
 */
export class SandboxProcessor implements PaymentProcessor {
  readonly name = 'sandbox';
  private readonly ledger: ChargeLedger;
  private readonly refunds: RefundLedger;

  constructor(private readonly options: { allowProduction: boolean; ledger?: ChargeLedger; refunds?: RefundLedger }) {
    this.ledger = options.ledger ?? memoryChargeLedger();
    this.refunds = options.refunds ?? memoryRefundLedger();
  }

  refusal(environment: 'SANDBOX' | 'PRODUCTION'): string | null {
    if (environment === 'SANDBOX' || this.options.allowProduction) return null;
    return 'Live payments need a real payment processor; the sandbox simulator does not charge in Production';
  }

  /**
   * The answer kept under the key, else this one (kept when final). `remember` answers with the
   * kept one, so a final answer costs one write and no read when it is the first.
   */
  async charge(request: ChargeRequest): Promise<ChargeResult> {
    const result = this.decide(request);
    // A challenge is answered by a new attempt; only final answers are remembered.
    if (result.status === 'requires_action') return (await this.ledger.find(request.idempotencyKey)) ?? result;
    return this.ledger.remember(request.idempotencyKey, result);
  }

  /** Deterministic by the reference's behaviour: `...0341` cards are declined, others succeed. */
  async chargeSavedCard(request: SavedCardChargeRequest): Promise<ChargeResult> {
    return this.ledger.remember(request.idempotencyKey, this.decideSaved(request));
  }

  /** The same for many: one read of the keys answered already, one write of the new answers. */
  async chargeSavedCards(requests: SavedCardChargeRequest[]): Promise<ChargeResult[]> {
    const keys = [...new Set(requests.map((r) => r.idempotencyKey))];
    const earlier = await this.ledger.findMany(keys);
    const fresh = new Map<string, ChargeResult>();
    for (const request of requests) {
      if (!earlier.has(request.idempotencyKey) && !fresh.has(request.idempotencyKey)) {
        fresh.set(request.idempotencyKey, this.decideSaved(request));
      }
    }
    const kept = fresh.size > 0 ? await this.ledger.rememberMany([...fresh]) : new Map<string, ChargeResult>();
    return requests.map((r) => earlier.get(r.idempotencyKey) ?? kept.get(r.idempotencyKey)!);
  }

  private decideSaved(request: SavedCardChargeRequest): ChargeResult {
    const match = /^pm_sandbox_([a-z]+)_([0-9]{4})_([0-9]{2})([0-9]{4})_[A-Za-z0-9]+$/.exec(request.paymentMethodId);
    return !match
      ? { status: 'declined', code: 'payment_method_unknown', message: 'No such saved card.' }
      : (savedCardDecline(match[1]!) ?? {
          status: 'succeeded',
          payment_method: {
            id: request.paymentMethodId,
            brand: 'visa',
            last4: match[2]!,
            exp_month: Number(match[3]),
            exp_year: Number(match[4]),
          },
        });
  }

  lookup(idempotencyKey: string): Promise<ChargeResult | null> {
    return this.ledger.find(idempotencyKey);
  }

  release(idempotencyKey: string): Promise<ChargeResult> {
    return this.ledger.remember(idempotencyKey, RELEASED);
  }

  /**
   * Every refund of a sandbox charge succeeds, once per key: a repeat answers the refund made
   * first (kept in its ledger), so a retry never gives the money back twice.
   */
  async refund(request: RefundRequest): Promise<RefundResult> {
    const kept = await this.refunds.remember({
      idempotency_key: request.idempotencyKey,
      charge_key: request.chargeKey,
      amount: request.amount,
      refund_id: `sandbox_refund_${createHash('sha256').update(request.idempotencyKey).digest('hex').slice(0, 24)}`,
    });
    return { status: 'succeeded', refund_id: kept.refund_id };
  }

  /**
   * The card form of an embedded checkout: checks the card as a charge would (number, expiry,
   * CVC) and keeps only how it will answer, its brand, last four digits and expiry.
   */
  collect(card: CardInput, now: Date): { status: 'collected'; card: CollectedCard } | CardProblem {
    const problem = cardProblem(card, now);
    if (problem) return problem;
    const number = card.number.replace(/\s+/g, '');
    const expiry = parseExpiry(card.exp)!;
    const behaviour = (DECLINES[number]?.code ??
      (number === TEST_CARDS.challenge
        ? 'challenge'
        : (SAVED_CARD_BEHAVIOUR[number] ?? 'ok'))) as CollectedCard['behaviour'];
    return {
      status: 'collected',
      card: {
        behaviour,
        brand: brandOf(number),
        last4: number.slice(-4),
        exp_month: expiry.month,
        exp_year: expiry.year,
      },
    };
  }

  private decide(request: ChargeRequest): ChargeResult {
    if ('behaviour' in request.card) return decideCollected(request.card, request.challenge, request.now);
    const { challenge, now } = request;
    const card = request.card;
    const problem = cardProblem(card, now);
    if (problem) return problem;
    const number = card.number.replace(/\s+/g, '');
    const expiry = parseExpiry(card.exp)!;
    const decline = DECLINES[number];
    if (decline) return { status: 'declined', ...decline };
    if (number === TEST_CARDS.challenge) {
      if (challenge === undefined) return { status: 'requires_action', next_action: { type: 'challenge' } };
      if (challenge === 'fail') {
        return {
          status: 'declined',
          code: 'authentication_failed',
          message: 'The card authentication (3-D Secure) failed.',
        };
      }
    }
    const behaviour = SAVED_CARD_BEHAVIOUR[number] ?? 'ok';
    const month = String(expiry.month).padStart(2, '0');
    return {
      status: 'succeeded',
      payment_method: {
        id: `pm_sandbox_${behaviour}_${number.slice(-4)}_${month}${expiry.year}_${randomBase62(16)}`,
        brand: brandOf(number),
        last4: number.slice(-4),
        exp_month: expiry.month,
        exp_year: expiry.year,
      },
    };
  }
}

type CardProblem = { status: 'declined'; code: string; message: string };

function cardProblem(card: CardInput, now: Date): CardProblem | null {
  const number = card.number.replace(/\s+/g, '');
  const expiry = parseExpiry(card.exp);
  if (!luhnValid(number))
    return { status: 'declined', code: 'incorrect_number', message: 'Your card number is incorrect.' };
  if (!expiry || isExpired(expiry, now)) {
    return { status: 'declined', code: 'invalid_expiry', message: "Your card's expiration date is in the past." };
  }
  if (!/^[0-9]{3,4}$/.test(card.cvc)) {
    return { status: 'declined', code: 'incorrect_cvc', message: "Your card's security code is incorrect." };
  }
  return null;
}

/** A card-form card answers as its number would have: its behaviour was read from the number once. */
function decideCollected(card: CollectedCard, challenge: ChargeRequest['challenge'], now: Date): ChargeResult {
  if (isExpired({ month: card.exp_month, year: card.exp_year }, now)) {
    return { status: 'declined', code: 'invalid_expiry', message: "Your card's expiration date is in the past." };
  }
  const decline = Object.values(DECLINES).find((d) => d.code === card.behaviour);
  if (decline) return { status: 'declined', ...decline };
  if (card.behaviour === 'challenge') {
    if (challenge === undefined) return { status: 'requires_action', next_action: { type: 'challenge' } };
    if (challenge === 'fail') {
      return {
        status: 'declined',
        code: 'authentication_failed',
        message: 'The card authentication (3-D Secure) failed.',
      };
    }
  }
  const behaviour = card.behaviour === 'declines' ? 'declines' : 'ok';
  const month = String(card.exp_month).padStart(2, '0');
  return {
    status: 'succeeded',
    payment_method: {
      id: `pm_sandbox_${behaviour}_${card.last4}_${month}${card.exp_year}_${randomBase62(16)}`,
      brand: card.brand,
      last4: card.last4,
      exp_month: card.exp_month,
      exp_year: card.exp_year,
    },
  };
}

function savedCardDecline(behaviour: string): ChargeResult | null {
  const decline = SAVED_CARD_DECLINES[behaviour];
  return decline ? { status: 'declined', ...decline } : null;
}
