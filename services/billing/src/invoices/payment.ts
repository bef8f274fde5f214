import { type Invoice, type InvoicePayment, InvoiceIdParams, idText, notFound } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { callerOf, validate } from '@billing/service';
import type { Express } from 'express';
import { z } from 'zod';
import { findInvoice, findInvoiceByOrder } from './read-model';

/**
 * The processor key of an invoice's charge attempt, as renewals and retries charge it through
 * checkout (`engine/renewals/`): invoice and attempt, so a repeated attempt is one charge.
 */
export const invoiceChargeKey = (invoiceId: string, attempt: number) => `${invoiceId}:${attempt}`;

/**
 * How an invoice was paid, for checkout's refunds (docs/decisions/0009-refunds.md): by the
 * checkout order (`order_id`), or by the attempt that paid it, the last one. Nothing charged
 * (amount 0, or not paid) has no charge key.
 */
export function invoicePaymentOf(invoice: Invoice): InvoicePayment {
  const charged = invoice.status === 'paid' && invoice.order_id === null && invoice.amount_paid > 0;
  return {
    invoice_id: invoice.id,
    status: invoice.status,
    amount_paid: invoice.amount_paid,
    amount_credited: invoice.amount_credited ?? 0,
    order_id: invoice.order_id,
    checkout_session_id: invoice.checkout_session_id,
    charge_key: charged ? invoiceChargeKey(invoice.id, invoice.attempt_count) : null,
  };
}

/** `GET /internal/invoices/:id/payment` (checkout, in the caller's tenancy; another tenant's invoice is 404). */
export function mountInvoicePaymentRoute(app: Express, { store }: ServiceContext): void {
  app.get('/internal/invoices/:id/payment', validate({ params: InvoiceIdParams }), async (req, res) => {
    const { id } = res.locals.input.params;
    const invoice = await findInvoice(store.database, store.tables.schema, callerOf(req), id);
    if (!invoice) throw notFound(`No such invoice: ${id}`);
    res.json(invoicePaymentOf(invoice));
  });

  /**
   * `GET /internal/orders/:id/invoice-payment`: the first-period invoice a subscription's checkout
   * order paid, as above, so that a refund of the order counts what switches credited from it.
   * 404 for an order that paid no invoice (a one-time purchase).
   */
  app.get('/internal/orders/:id/invoice-payment', validate({ params: OrderIdParams }), async (req, res) => {
    const { id } = res.locals.input.params;
    const invoice = await findInvoiceByOrder(store.database, store.tables.schema, callerOf(req), id);
    if (!invoice) throw notFound(`No invoice was paid by order ${id}`);
    res.json(invoicePaymentOf(invoice));
  });
}

const OrderIdParams = z.object({ id: idText() });
