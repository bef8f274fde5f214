import type { PaymentInstructions } from '@billing/contracts';
import { type ServiceContext, findMerchant } from '@billing/runtime';
import { formBodies, formatDateTime, formatTwd, html } from '@billing/service';
import type { Express, Request, Response } from 'express';
import { acceptEcpayInvoiceNotification, invoicePaymentOf, openInvoicePayment } from '../payments/ecpay-invoice-codes';
import type { EcpayInvoiceTrade } from '../payments/ecpay/invoice-trades';
import { NOTIFICATION_RECEIVED } from '../payments/ecpay/notifications';
import { recheckIfPaid } from '../payments/renewal-charges';
import { renderInstructionsPage, renderProcessorRedirect } from './async-payment-pages';
import { page } from './html';
import { chooseLocale, messagesFor } from './messages';
import { type PageContext, merchantHeader, renderMessagePage } from './render';

/**
 * The page of a renewal invoice paid by transfer through ECPay (payments/ecpay-invoice-codes.ts),
 * at `hosted_instructions_url`: the amount and deadline and a button to ECPay, which issues the
 * account or code on its own page; then the account or code, or that it was paid or has expired.
 * Its address is its only key, as a checkout page's is. In the buyer's browser's language.
 */
export function mountInvoicePaymentPages(app: Express, context: ServiceContext): void {
  const path = '/checkout/invoice-payments/:page_token';
  const pageOf = async (req: Request, trade: EcpayInvoiceTrade | null): Promise<PageContext> => ({
    t: messagesFor(chooseLocale(null, req.get('accept-language'))),
    merchant: trade && (await findMerchant(context.store.database, context.store.tables.schema, trade.organization)),
  });
  const token = (req: Request) => String(req.params.page_token);

  app.get(path, async (req, res) => {
    const found = await invoicePaymentOf(context, token(req));
    const view = await pageOf(req, found?.trade ?? null);
    send(
      res,
      found ? invoicePaymentPage(context, found.trade, found.instructions, view, req.originalUrl.split('?')[0]!) : null,
      view,
    );
  });

  // The buyer's button: the signed form to ECPay, once; after that the page as it stands.
  app.post(path, formBodies('1kb'), async (req, res) => {
    const found = await invoicePaymentOf(context, token(req));
    const view = await pageOf(req, found?.trade ?? null);
    const form = found && (await openInvoicePayment(context, found.trade));
    if (form) return void res.type('html').send(renderProcessorRedirect(form, 'ecpay', view));
    res.redirect(303, req.originalUrl.split('?')[0]!);
  });

  // ECPay's server-to-server posts: the account or code issued (PaymentInfoURL) and the payment (ReturnURL).
  for (const kind of ['payment-info', 'result']) {
    app.post(`${path}/ecpay/${kind}`, formBodies('16kb'), async (req, res) => {
      const checked = await acceptEcpayInvoiceNotification(context, token(req), req.body ?? {});
      // A transfer billing was told had not come by its deadline: asked about at once.
      await recheckIfPaid(context, checked);
      res
        .status(checked ? 200 : 400)
        .type('text')
        .send(checked ? NOTIFICATION_RECEIVED : '0|Not a post of this merchant about this invoice');
    });
  }
}

function send(res: Response, body: string | null, view: PageContext): void {
  if (body) return void res.type('html').send(body);
  const { titles, texts } = view.t;
  res
    .status(404)
    .type('html')
    .send(renderMessagePage(titles.notFound, texts.notFound, undefined, view));
}

/** Paid, expired, the account or code ECPay issued, waiting for ECPay, or the button to ECPay. */
function invoicePaymentPage(
  context: ServiceContext,
  trade: EcpayInvoiceTrade,
  instructions: PaymentInstructions,
  view: PageContext,
  action: string,
): string {
  const p = view.t.invoicePayment;
  if (trade.paidAt) return renderMessagePage(p.paidTitle, p.paid, undefined, view);
  if (context.now().getTime() >= Date.parse(instructions.expires_at)) {
    return renderMessagePage(p.expiredTitle, p.expired, undefined, view);
  }
  if (trade.instructions) return renderInstructionsPage(p.renewal, instructions, view, p.waitingNote);
  if (trade.openedAt) return renderMessagePage(p.waitingTitle, p.waiting, undefined, view);
  return askEcpayPage(instructions, view, action);
}

function askEcpayPage(instructions: PaymentInstructions, view: PageContext, action: string): string {
  const { t } = view;
  const p = t.invoicePayment;
  const atm = instructions.type === 'atm';
  return page(
    p.title,
    html`${merchantHeader(view.merchant)}
      <h1>${p.title}</h1>
      <p class="muted">${p.intro(instructions.type)}</p>
      <dl class="summary receipt" id="invoice-payment">
        <div>
          <dt>${t.asyncPayment.amount}</dt>
          <dd id="amount">${formatTwd(instructions.amount)}</dd>
        </div>
        <div>
          <dt>${t.asyncPayment.payBefore}</dt>
          <dd id="pay-before">${formatDateTime(instructions.expires_at, { lang: t.lang })}</dd>
        </div>
      </dl>
      <form method="post" action="${action}">
        <button type="submit" id="continue">${atm ? p.getAtm : p.getCvs}</button>
      </form>`,
    { lang: t.lang, brandColor: view.merchant?.brand_color },
  );
}
