import type { AsyncPaymentProcessor, PaymentInstructions } from '@billing/contracts';
import { formatDateTime, formatTwd, html, raw } from '@billing/service';
import { page } from './html';
import { type PageContext, merchantHeader } from './render';

/** A form the buyer's browser posts to a processor's page: ECPay's AioCheckOut, PAYUNi's UPP. */
export type ProcessorForm = { action: string; fields: Record<string, string> };

/**
 * The form the buyer's browser posts to the processor, sent at once by a script and by a
 * button without one: the processor's page then opens the account or code.
 */
export function renderProcessorRedirect(
  form: ProcessorForm,
  processor: AsyncPaymentProcessor,
  context: PageContext,
): string {
  const { t } = context;
  const name = t.asyncPayment.processors[processor];
  const fields = Object.entries(form.fields).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`,
  );
  return page(
    t.asyncPayment.continue(name),
    html`${merchantHeader(context.merchant)}
      <p class="muted">${t.asyncPayment.redirecting(name)}</p>
      <form method="post" action="${form.action}" id="processor-form">
        ${fields}
        <button type="submit" id="continue">${t.asyncPayment.continue(name)}</button>
      </form>
      ${raw(`<script>document.getElementById('processor-form').submit();</script>`)}`,
    { lang: t.lang, brandColor: context.merchant?.brand_color },
  );
}

/** How to pay an ATM or convenience-store payment: the account or code, the amount, the deadline in Taiwan time. */
export function renderInstructionsPage(
  productName: string,
  instructions: PaymentInstructions,
  context: PageContext,
  waitingNote = context.t.asyncPayment.waitingNote,
): string {
  const { t } = context;
  const a = t.asyncPayment;
  const line = (label: string, value: string, id: string) =>
    html`<div>
      <dt>${label}</dt>
      <dd id="${id}">${value}</dd>
    </div>`;
  const atm = instructions.type === 'atm';
  return page(
    atm ? a.atmTitle : a.cvsTitle,
    html`${merchantHeader(context.merchant)}
      <h1>${atm ? a.atmTitle : a.cvsTitle}</h1>
      <p class="muted">${productName}</p>
      <dl class="summary receipt" id="instructions">
        ${atm ? line(a.bankCode, instructions.bank_code ?? '', 'bank-code') : ''}
        ${atm ? line(a.account, instructions.account ?? '', 'account') : line(a.paymentCode, instructions.payment_code ?? '', 'payment-code')}
        ${line(a.amount, formatTwd(instructions.amount), 'amount')}
        ${line(a.payBefore, formatDateTime(instructions.expires_at, { lang: t.lang }), 'pay-before')}
      </dl>
      <p class="muted">${waitingNote}</p>`,
    { lang: t.lang, brandColor: context.merchant?.brand_color },
  );
}
