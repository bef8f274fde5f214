import {
  type CheckoutSessionCompletedData,
  type Einvoice as EinvoiceChoice,
  type Invoice,
  RefundSucceededData,
  InvoicePaidData,
  type DomainEventEnvelope,
} from '@billing/contracts';
import type { EventStore, EventStoreTransaction } from '@billing/eventstore';
import type { Logger, Tenant } from '@billing/service';
import { findCustomer } from '../customers/queries';
import { einvoiceAggregate, einvoiceIdOf, merchantOrderNumberOf } from './aggregate';
import { chooseEinvoice, choiceOf, customerChoice } from './choice';
import type { EinvoiceContact } from './einvoice';
import { findEinvoiceOf } from './read-model';
import { storedEinvoiceSettings } from './settings/einvoice-settings';

/**
 * Where e-invoices are asked for, each in the consumer's inbox transaction (exactly once):
 * - a paid checkout keeps the buyer's choice for the customer's later payments, and a one-time
 *   purchase (PAYMENT mode) asks for the order's e-invoice;
 * - every paid billing invoice (a subscription's first period, renewals, proration charges,
 *   dunning retries, transfers once paid) asks for its own, with the customer's choice;
 * - a succeeded refund asks its e-invoice for a void or an allowance.
 * Nothing is asked while the organization has no e-invoice provider in the environment. Each
 * answers whether it asked something of an e-invoice (the worker is then nudged).
 */
export async function einvoiceForCheckout(
  store: EventStore,
  tx: EventStoreTransaction,
  tenant: Tenant,
  customerId: string,
  paid: CheckoutSessionCompletedData,
  now: Date,
): Promise<boolean> {
  const chosen = choiceOf(paid.einvoice);
  if (chosen) await chooseEinvoice(store, tx, tenant, customerId, chosen, now);
  const mode = paid.mode ?? (paid.product?.type === 'SUBSCRIPTION' ? 'SUBSCRIPTION' : 'PAYMENT');
  // A donation is a gift, not a sale: it gets no uniform invoice.
  if (mode !== 'PAYMENT' || paid.amount_total < 1 || paid.product?.type === 'DONATION') return false;
  return requestEinvoice(store, tx, tenant, {
    source: `order:${paid.order_id}`,
    invoiceId: null,
    orderId: paid.order_id,
    customerId,
    description: paid.product?.name ?? 'Purchase',
    total: paid.amount_total,
    now,
    buyer: async () => ({
      choice: chosen ?? (await customerChoice(store, tx, customerId)),
      contact: { email: paid.customer_email ?? null, name: paid.customer_name ?? null },
    }),
  });
}

export async function einvoiceForPaidInvoice(
  store: EventStore,
  tx: EventStoreTransaction,
  event: DomainEventEnvelope,
  now: Date,
  logger?: Logger,
): Promise<boolean> {
  const parsed = InvoicePaidData.safeParse(event.data);
  if (!parsed.success) {
    logger?.error({ eventId: event.id }, 'invoice.paid payload does not match its schema; no e-invoice asked');
    return false;
  }
  const invoice = parsed.data.object;
  if (invoice.amount_paid < 1) return false;
  const tenant: Tenant = { organization: event.organization, environment: event.environment };
  return requestEinvoice(store, tx, tenant, {
    source: `invoice:${invoice.id}`,
    invoiceId: invoice.id,
    // A first period's invoice was paid by a checkout order: its thank-you page shows this e-invoice.
    orderId: invoice.order_id,
    customerId: invoice.customer_id,
    description: descriptionOf(invoice),
    total: invoice.amount_paid,
    now,
    buyer: async () => {
      const [choice, customer] = await Promise.all([
        customerChoice(store, tx, invoice.customer_id),
        findCustomer(tx, store.tables.schema, tenant, { by: 'id', value: invoice.customer_id }),
      ]);
      return { choice, contact: { email: customer?.email ?? null, name: customer?.name ?? null } };
    },
  });
}

export async function einvoiceForRefund(
  store: EventStore,
  tx: EventStoreTransaction,
  event: DomainEventEnvelope,
  now: Date,
): Promise<boolean> {
  const parsed = RefundSucceededData.safeParse(event.data);
  if (!parsed.success || parsed.data.object.status !== 'succeeded') return false;
  const refund = parsed.data.object;
  const tenant: Tenant = { organization: event.organization, environment: event.environment };
  // A refund of a subscription's first period names its order: that invoice's e-invoice carries it too.
  const einvoice = await findEinvoiceOf(tx, store.tables.schema, tenant, {
    invoiceId: refund.invoice_id,
    orderId: refund.order_id,
  });
  if (!einvoice) return false;
  const { events } = await einvoiceAggregate.handleInTransaction(
    tx,
    store,
    einvoice.id,
    { type: 'RecordRefund', data: { refundId: refund.id, amount: refund.amount, now } },
    { ...tenant, occurredAt: now },
  );
  return events.length > 0;
}

/**
 * An invoice names its plan on its subscription line (a switch's too, beside its proration
 * credit), and the meters when it bills usage as well: the e-invoice's one item is the total.
 * A final invoice bills usage alone.
 */
export function descriptionOf(invoice: Pick<Invoice, 'lines' | 'number'>): string {
  const line =
    invoice.lines.find((l) => l.kind === 'subscription') ?? invoice.lines.find((l) => l.kind === 'proration');
  const meters = [...new Set(invoice.lines.flatMap((l) => (l.kind === 'usage' && l.meter ? [l.meter] : [])))];
  if (!line && meters.length > 0) return `Usage (${meters.join(', ')})`;
  const plan = line?.description ?? `Invoice ${invoice.number}`;
  return meters.length > 0 ? `${plan} + usage (${meters.join(', ')})` : plan;
}

async function requestEinvoice(
  store: EventStore,
  tx: EventStoreTransaction,
  tenant: Tenant,
  sale: {
    source: string;
    invoiceId: string | null;
    orderId: string | null;
    customerId: string | null;
    description: string;
    total: number;
    now: Date;
    /** Who buys, read only when the organization issues e-invoices. */
    buyer: () => Promise<{ choice: EinvoiceChoice | null; contact: EinvoiceContact }>;
  },
): Promise<boolean> {
  const { settings } = await storedEinvoiceSettings(store, tenant, tx);
  if (!settings.enabled || settings.provider === 'none') return false;
  const einvoiceId = einvoiceIdOf(tenant, sale.source);
  const { choice, contact } = await sale.buyer();
  // A donation is offered only where the organization allows it: otherwise the member carrier.
  const buyer =
    !choice || (choice.type === 'DONATION' && !settings.donation_offered) ? { type: 'MEMBER' as const } : choice;
  const { events } = await einvoiceAggregate.handleInTransaction(
    tx,
    store,
    einvoiceId,
    {
      type: 'RequestEinvoice',
      data: {
        einvoiceId,
        ...tenant,
        invoiceId: sale.invoiceId,
        orderId: sale.orderId,
        customerId: sale.customerId,
        buyer,
        contact,
        provider: settings.provider,
        merchantOrderNumber: merchantOrderNumberOf(einvoiceId),
        taxType: settings.tax_type,
        description: sale.description.slice(0, 100),
        total: sale.total,
        now: sale.now,
      },
    },
    { ...tenant, occurredAt: sale.now },
  );
  return events.length > 0;
}
