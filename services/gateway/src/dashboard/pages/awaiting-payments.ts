import { type Html, html } from '@billing/service';
import { withQuery } from '../client';
import { twd, when } from '../html';
import { type PageContext, table, customerLink } from '../page';

/** How a buyer pays at an ATM or a convenience store (the checkout's or the invoice's). */
interface PaymentInstructions {
  type: 'atm' | 'cvs';
  bank_code: string | null;
  account: string | null;
  payment_code: string | null;
  amount: number;
  expires_at: string;
}
/** Checkout's order whose buyer is still to pay. */
interface AwaitingOrder {
  id: string;
  product: { name: string };
  customer_id: string | null;
  customer_email: string | null;
  processor: string;
  processor_reference: string;
  payment_instructions: PaymentInstructions;
}
/** Billing's open invoice waiting for a transfer. */
interface AwaitingInvoice {
  id: string;
  number: string;
  customer_id: string;
  customer_email: string | null;
  payment_instructions: PaymentInstructions;
}

/** One payment a buyer was told how to make and has not made yet. */
interface Awaiting {
  instructions: PaymentInstructions;
  customerId: string | null;
  customerEmail: string | null;
  what: Html;
  reference: Html | string;
}

/** The most shown of each kind: a waiting payment lasts days, and the lists beside it have every one once paid. */
const SHOWN = 20;

const fromOrder = (o: AwaitingOrder): Awaiting => ({
  instructions: o.payment_instructions,
  customerId: o.customer_id,
  customerEmail: o.customer_email,
  what: html`${o.product.name} · <code>${o.id}</code>`,
  reference: html`${processorName(o.processor)} <code>${o.processor_reference}</code>`,
});

const fromInvoice = (ctx: PageContext, i: AwaitingInvoice): Awaiting => ({
  instructions: i.payment_instructions,
  customerId: i.customer_id,
  customerEmail: i.customer_email,
  what: html`<a href="${ctx.base}/invoices/${i.id}">${ctx.t('Invoice {number}', { number: i.number })}</a>`,
  reference: '—',
});

export const processorName = (processor: string): string =>
  ({ ecpay: 'ECPay', payuni: 'PAYUNi', sandbox: 'Sandbox' })[processor] ?? processor;

/**
 * Orders (checkout) and renewal invoices (billing) whose buyer was given an ATM account or a store
 * code and has not paid: soonest deadline first. Nothing when there are none.
 */
export async function awaitingPayments(ctx: PageContext): Promise<Html | ''> {
  const [orders, invoices] = await Promise.all([
    ctx.api.admin<{ data: AwaitingOrder[] }>(
      'GET',
      withQuery('/orders/awaiting_payment', { environment: ctx.environment, limit: SHOWN }),
    ),
    ctx.api.admin<{ data: AwaitingInvoice[] }>(
      'GET',
      withQuery('/invoices', { environment: ctx.environment, awaiting_transfer: 'true', limit: SHOWN }),
    ),
  ]);
  const waiting = [...orders.data.map(fromOrder), ...invoices.data.map((i) => fromInvoice(ctx, i))];
  if (waiting.length === 0) return '';
  waiting.sort((a, b) => a.instructions.expires_at.localeCompare(b.instructions.expires_at));
  const { t } = ctx;
  return table(
    t('Waiting for payment'),
    [t('Pay by'), t('Amount'), t('Customer'), t('For'), t('How'), t('Reference')],
    waiting.map((w) => awaitingRow(ctx, w)),
  );
}

function awaitingRow(ctx: PageContext, w: Awaiting): Html {
  const customer = customerLink(ctx, w.customerId, w.customerEmail);
  return html`<tr>
    <td>${when(w.instructions.expires_at)}</td>
    <td>${twd(w.instructions.amount)}</td>
    <td>${customer}</td>
    <td>${w.what}</td>
    <td>${howToPay(ctx, w.instructions)}</td>
    <td>${w.reference}</td>
  </tr>`;
}

function howToPay(ctx: PageContext, i: PaymentInstructions): Html {
  // ECPay issues a renewal's account or code on its own page: until the buyer has been there, none.
  if (!i.account && !i.payment_code) {
    const method = i.type === 'atm' ? ctx.t('ATM transfer') : ctx.t('Store code');
    return html`${method} (${ctx.t('the buyer gets it at ECPay')})`;
  }
  return i.type === 'atm'
    ? html`${ctx.t('ATM transfer')} <code>${i.bank_code ?? ''}</code> <code>${i.account ?? ''}</code>`
    : html`${ctx.t('Store code')} <code>${i.payment_code ?? ''}</code>`;
}
