import type { DomainEventEnvelope } from '@billing/contracts';
import type { PageLanguage } from '@billing/service';
import type { EmailFacts, EmailKind } from './compose';

/**
 * An email an event asks for: its kind, who gets it (billing's customer, or an address when the
 * event names no customer), and what it tells.
 */
export interface EmailRequest {
  kind: EmailKind;
  /**
   * The checkout session or invoice it is about: a reminder of it is dropped once it is paid. A
   * receipt's is the invoice or one-time order it was paid for, which its e-invoice names.
   */
  ref?: string | null;
  /** Not before then (a reminder); at once when absent. */
  due_at?: string | null;
  /** A receipt of a sale: billing issues it an e-invoice where the organization issues them. */
  einvoiced?: boolean;
  /** Held until then for its e-invoice's number (`einvoice-wait.ts`), unless that comes first. */
  hold_until?: string | null;
  customer_id: string | null;
  email: string | null;
  /** The language the buyer chose where the event says it; else the customer's, else zh-TW. */
  locale: PageLanguage | null;
  facts: EmailFacts;
}

type Fields = Record<string, unknown>;

const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
const whole = (value: unknown): number => (typeof value === 'number' && Number.isInteger(value) ? value : 0);
const fields = (value: unknown): Fields => (value && typeof value === 'object' ? (value as Fields) : {});

const NO_FACTS: EmailFacts = {
  amount: 0,
  item: null,
  period: null,
  invoice_number: null,
  einvoice_number: null,
  at: null,
  reason: null,
  instructions: null,
};

/**
 * The email a public event asks for, or null. A subscription's payments (its first period, its
 * renewals, a switch's proration) are receipted from `invoice.paid`; `checkout.completed` gives
 * the receipt of a one-time purchase only, which has no invoice, so no payment is receipted twice.
 * Refunds likewise: an invoice's from `invoice.refunded`; a one-time order's from `refund.updated`.
 */
export function emailRequestOf(event: DomainEventEnvelope): EmailRequest | null {
  const data = fields(event.data);
  const object = fields(data.object);
  switch (event.type) {
    case 'checkout.completed':
      return oneTimeReceipt(data);
    case 'invoice.paid':
      return invoiceReceipt(object);
    case 'invoice.payment_failed':
      return invoiceEmail('payment_failed', object, {
        amount: whole(object.amount_due),
        at: text(object.next_payment_attempt),
      });
    case 'invoice.refunded':
      return invoiceEmail('refund', object, { amount: whole(data.amount), period: null, at: null });
    case 'subscription.trial_will_end':
      return subscriptionEmail('trial_will_end', object, { at: text(object.trial_end) });
    case 'subscription.canceled':
      return subscriptionEmail('subscription_canceled', object, {});
    case 'subscription.renewal_upcoming':
      return subscriptionEmail('renewal_upcoming', object, { at: text(data.renews_at) });
    case 'refund.updated':
      return oneTimeRefund(object);
    case 'checkout.async_payment_pending':
      return checkoutInstructions(data, object);
    case 'invoice.payment_action_required':
      return invoiceInstructions(data, object);
    default:
      return null;
  }
}

/** The language a checkout was paid in, when the merchant chose one, and its buyer's address. */
export function buyerLocaleOf(event: DomainEventEnvelope): { email: string; locale: PageLanguage } | null {
  if (event.type !== 'checkout.completed') return null;
  const data = fields(event.data);
  const email = text(data.customer_email);
  const locale = localeOf(data.locale);
  return email && locale ? { email, locale } : null;
}

function oneTimeReceipt(data: Fields): EmailRequest | null {
  if (data.mode !== 'PAYMENT' || whole(data.amount_total) <= 0) return null;
  const email = text(data.customer_email);
  if (!email && !text(data.customer_id)) return null;
  const product = fields(data.product);
  return {
    kind: 'receipt',
    ref: text(data.order_id),
    // A donation is a gift, not a sale: billing issues it no e-invoice.
    einvoiced: product.type !== 'DONATION',
    customer_id: text(data.customer_id),
    email,
    locale: localeOf(data.locale),
    facts: {
      ...NO_FACTS,
      amount: whole(data.amount_total),
      item: text(product.name),
      at: text(data.completed_at),
    },
  };
}

/** A one-time order's refund: its checkout session names the buyer (`refundsOfOrders` keeps who). */
function oneTimeRefund(refund: Fields): EmailRequest | null {
  if (refund.status !== 'succeeded' || text(refund.invoice_id) || !text(refund.order_id)) return null;
  return {
    kind: 'refund',
    customer_id: null,
    email: null,
    locale: null,
    facts: { ...NO_FACTS, amount: whole(refund.amount), reason: text(refund.reason) },
  };
}

/** Every paid invoice of an amount is a sale: a subscription's first period, a renewal, a proration charge. */
function invoiceReceipt(invoice: Fields): EmailRequest | null {
  if (whole(invoice.amount_paid) <= 0) return null;
  const receipt = invoiceEmail('receipt', invoice, { at: text(invoice.paid_at) });
  return receipt && { ...receipt, ref: text(invoice.id), einvoiced: true };
}

function invoiceEmail(kind: EmailKind, invoice: Fields, overrides: Partial<EmailFacts>): EmailRequest | null {
  const customerId = text(invoice.customer_id);
  if (!customerId) return null;
  const line = fields(
    Array.isArray(invoice.lines) ? invoice.lines.find((l) => fields(l).kind === 'subscription') : null,
  );
  const start = text(invoice.period_start);
  const end = text(invoice.period_end);
  return {
    kind,
    customer_id: customerId,
    email: null,
    locale: null,
    facts: {
      ...NO_FACTS,
      amount: whole(invoice.amount_paid),
      item: text(line.description),
      period: start && end ? { start, end } : null,
      invoice_number: text(invoice.number),
      ...overrides,
    },
  };
}

function subscriptionEmail(kind: EmailKind, subscription: Fields, overrides: Partial<EmailFacts>): EmailRequest | null {
  const customerId = text(subscription.customer_id);
  if (!customerId) return null;
  return {
    kind,
    customer_id: customerId,
    email: null,
    locale: null,
    facts: {
      ...NO_FACTS,
      amount: whole(subscription.price),
      item: text(fields(subscription.product).name),
      ...overrides,
    },
  };
}

/** A day before the deadline: time to go to a bank or a store. */
export const PAYMENT_REMINDER_BEFORE_MS = 24 * 3_600_000;

/**
 * The ATM account or store code of a payment by transfer, and, when its deadline is more than a
 * day away, a reminder a day before it (`remindersOf`).
 */
function instructionsFacts(instructions: Fields): EmailFacts | null {
  const type = instructions.type;
  if (type !== 'atm' && type !== 'cvs') return null;
  return {
    ...NO_FACTS,
    amount: whole(instructions.amount),
    at: text(instructions.expires_at),
    instructions: {
      type,
      bank_code: text(instructions.bank_code),
      account: text(instructions.account),
      payment_code: text(instructions.payment_code),
      hosted_instructions_url: text(instructions.hosted_instructions_url),
    },
  };
}

function checkoutInstructions(data: Fields, session: Fields): EmailRequest | null {
  const facts = instructionsFacts(fields(data.instructions));
  const email = text(data.customer_email) ?? text(session.customer_email);
  if (!facts || (!email && !text(session.customer_id))) return null;
  return {
    kind: 'payment_instructions',
    ref: text(data.session_id) ?? text(session.id),
    customer_id: email ? null : text(session.customer_id),
    email,
    locale: localeOf(data.locale),
    facts,
  };
}

function invoiceInstructions(data: Fields, invoice: Fields): EmailRequest | null {
  const facts = instructionsFacts(fields(data.payment_instructions));
  const customerId = text(invoice.customer_id);
  if (!facts || !customerId) return null;
  return {
    kind: 'payment_instructions',
    ref: text(data.invoice_id) ?? text(invoice.id),
    customer_id: customerId,
    email: null,
    locale: null,
    facts: { ...facts, invoice_number: text(invoice.number) },
  };
}

/** The reminder that goes with payment instructions: a day before the deadline, if that is still ahead. */
export function reminderOf(request: EmailRequest, now: Date): EmailRequest | null {
  if (request.kind !== 'payment_instructions' || !request.facts.at) return null;
  const dueAt = Date.parse(request.facts.at) - PAYMENT_REMINDER_BEFORE_MS;
  if (!(dueAt > now.getTime())) return null;
  return { ...request, kind: 'payment_reminder', due_at: new Date(dueAt).toISOString() };
}

/** The checkout session or invoice an event says was paid or closed: its reminders are dropped. */
export function settledRefOf(event: DomainEventEnvelope): string | null {
  const data = fields(event.data);
  switch (event.type) {
    case 'checkout.completed':
    case 'checkout.expired':
    case 'checkout.async_payment_expired':
      return text(data.session_id);
    case 'invoice.paid':
    case 'invoice.payment_failed':
      return text(data.invoice_id) ?? text(fields(data.object).id);
    default:
      return null;
  }
}

/** What became of a payment's e-invoice: issued with its number, or an attempt to issue it failed. */
export interface EinvoiceOutcome {
  /** The invoice or one-time order it was issued for: its receipt's `ref`. */
  ref: string;
  number: string | null;
}

/**
 * The outcome an e-invoice event tells of its payment. A subscription's first invoice was paid by
 * a checkout order and names both: its receipt is the invoice's. A failed void or allowance of an
 * issued e-invoice tells nothing new.
 */
export function einvoiceOutcomeOf(event: DomainEventEnvelope): EinvoiceOutcome | null {
  const einvoice = fields(fields(event.data).object);
  const ref = text(einvoice.invoice_id) ?? text(einvoice.order_id);
  if (!ref) return null;
  if (event.type === 'einvoice.issued') {
    const number = text(einvoice.number);
    return number ? { ref, number } : null;
  }
  if (event.type === 'einvoice.failed' && einvoice.status === 'pending') return { ref, number: null };
  return null;
}

const localeOf = (value: unknown): PageLanguage | null => (value === 'zh-TW' || value === 'en' ? value : null);
