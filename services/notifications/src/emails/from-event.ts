import type { DomainEventEnvelope } from '@billing/contracts';
import type { PageLanguage } from '@billing/service';
import type { EmailFacts, EmailKind } from './compose';

/**
 * An email an event asks for: its kind, who gets it (billing's customer, or an address when the
 * event names no customer), and what it tells.
 */
export interface EmailRequest {
  kind: EmailKind;
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
      return whole(object.amount_paid) > 0 ? invoiceEmail('receipt', object, { at: text(object.paid_at) }) : null;
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
    case 'refund.updated':
      return oneTimeRefund(object);
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
  return {
    kind: 'receipt',
    customer_id: text(data.customer_id),
    email,
    locale: localeOf(data.locale),
    facts: {
      ...NO_FACTS,
      amount: whole(data.amount_total),
      item: text(fields(data.product).name),
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

const localeOf = (value: unknown): PageLanguage | null => (value === 'zh-TW' || value === 'en' ? value : null);
