import type { EmailKind } from '@billing/contracts';
import { type Merchant } from '@billing/runtime';
import { type Html, type PageLanguage, formatDate, formatDateTime, formatTwd, html } from '@billing/service';
import { EMAIL_MESSAGES, type EmailMessages } from './messages';

export type { EmailKind };

/**
 * What an email tells, taken from its event when it is queued (so that a later change of the
 * record does not rewrite what the buyer was told). Amounts in whole TWD; times ISO 8601.
 */
export interface EmailFacts {
  amount: number;
  item: string | null;
  period: { start: string; end: string } | null;
  invoice_number: string | null;
  einvoice_number: string | null;
  /** When it was paid (receipt), will be charged (trial), or is retried (failed payment). */
  at: string | null;
  reason: string | null;
  /** How to pay by transfer: an ATM account or a store code; null for other emails. */
  instructions?: PaymentCode | null;
}

export interface PaymentCode {
  type: 'atm' | 'cvs';
  bank_code: string | null;
  account: string | null;
  payment_code: string | null;
  /** Where the buyer gets the account or code when the processor issues it on its own page (ECPay). */
  hosted_instructions_url?: string | null;
}

/** A button in the email: where it goes, what it says, and a line under it. */
interface EmailLink {
  url: string;
  label: string;
  note: string | null;
}

export interface Recipient {
  email: string;
  name: string | null;
  locale: PageLanguage;
}

/** A link in the email that opens the customer portal, and until when it works. */
export interface PortalLink {
  url: string;
  expires_at: string;
}

export interface ComposedEmail {
  subject: string;
  text: string;
  html: string;
}

/** Rows of label and value, the body of most emails. */
type Rows = [string, string][];

/** The email of `kind` to `recipient`, in the recipient's language, with the merchant's name, logo and colour. */
export function composeEmail(
  kind: EmailKind,
  facts: EmailFacts,
  recipient: Recipient,
  merchant: Merchant,
  portal: PortalLink | null = null,
): ComposedEmail {
  const m = EMAIL_MESSAGES[recipient.locale];
  const lang = recipient.locale;
  const day = (iso: string) => formatDate(iso, { lang });
  const time = (iso: string) => formatDateTime(iso, { lang });
  const amount = formatTwd(facts.amount);
  const content = contentOf(kind, facts, m, merchant.name, { amount, day, time });
  const link = linkOf(kind, facts, m, portal, time);
  return {
    subject: content.subject,
    text: plainText(content, m, merchant, link),
    html: htmlBody(content, m, merchant, link, lang).value,
  };
}

/** The email's button: the portal's card form after a failed payment, or the page where the buyer gets an account or code. */
function linkOf(
  kind: EmailKind,
  facts: EmailFacts,
  m: EmailMessages,
  portal: PortalLink | null,
  time: (iso: string) => string,
): EmailLink | null {
  if (kind === 'payment_failed' && portal) {
    return { url: portal.url, label: m.updateCard, note: m.updateCardExpires(time(portal.expires_at)) };
  }
  const url = getCodeUrlOf(facts.instructions);
  if (!url || (kind !== 'payment_instructions' && kind !== 'payment_reminder')) return null;
  return { url, label: facts.instructions!.type === 'atm' ? m.getAtmAccount : m.getCvsCode, note: null };
}

/** The page where the buyer gets the account or code, while the instructions hold neither. */
const getCodeUrlOf = (code: PaymentCode | null | undefined) =>
  code && !code.account && !code.payment_code ? (code.hosted_instructions_url ?? null) : null;

interface Content {
  subject: string;
  heading: string;
  intro: string;
  rows: Rows;
}

function contentOf(
  kind: EmailKind,
  facts: EmailFacts,
  m: EmailMessages,
  merchant: string,
  f: { amount: string; day: (iso: string) => string; time: (iso: string) => string },
): Content {
  const item = facts.item ?? '';
  switch (kind) {
    case 'receipt':
      return {
        subject: m.receiptSubject(merchant),
        heading: m.receiptHeading,
        intro: m.receiptIntro(merchant),
        rows: rows([
          [m.amountPaid, f.amount],
          [m.item, facts.item],
          [m.period, facts.period && `${f.day(facts.period.start)} – ${f.day(facts.period.end)}`],
          [m.invoiceNumber, facts.invoice_number],
          [m.einvoiceNumber, facts.einvoice_number],
          [m.paidOn, facts.at && f.time(facts.at)],
        ]),
      };
    case 'payment_failed':
      return {
        subject: m.paymentFailedSubject(merchant),
        heading: m.paymentFailedHeading,
        intro: m.paymentFailedIntro(merchant, f.amount),
        rows: rows([
          [m.item, facts.item],
          [m.invoiceNumber, facts.invoice_number],
          [m.nextAttempt, facts.at && f.time(facts.at)],
        ]),
      };
    case 'trial_will_end':
      return {
        subject: m.trialEndingSubject(merchant),
        heading: m.trialEndingHeading,
        intro: m.trialEndingIntro(item, facts.at ? f.day(facts.at) : '', f.amount),
        rows: [],
      };
    case 'renewal_upcoming':
      return {
        subject: m.renewalSubject(merchant),
        heading: m.renewalHeading,
        intro: m.renewalIntro(item, facts.at ? f.day(facts.at) : '', f.amount),
        rows: [],
      };
    case 'subscription_canceled':
      return {
        subject: m.canceledSubject(merchant),
        heading: m.canceledHeading,
        intro: m.canceledIntro(item),
        rows: [],
      };
    case 'payment_instructions':
    case 'payment_reminder': {
      const deadline = facts.at ? f.time(facts.at) : '';
      const code = facts.instructions;
      const reminder = kind === 'payment_reminder';
      return {
        subject: reminder ? m.reminderSubject(merchant, deadline) : m.instructionsSubject(merchant),
        heading: reminder ? m.reminderHeading : m.instructionsHeading,
        intro: `${m.instructionsIntro(f.amount, deadline)} ${getCodeUrlOf(code) ? m.getCodeHowTo : code?.type === 'cvs' ? m.cvsHowTo : m.atmHowTo}`,
        rows: rows([
          [m.amountToPay, f.amount],
          [m.bankCode, code?.type === 'atm' && code.bank_code],
          [m.account, code?.type === 'atm' && code.account],
          [m.paymentCode, code?.type === 'cvs' && code.payment_code],
          [m.deadline, deadline],
          [m.item, facts.item],
          [m.invoiceNumber, facts.invoice_number],
        ]),
      };
    }
    case 'refund':
      return {
        subject: m.refundSubject(merchant),
        heading: m.refundHeading,
        intro: m.refundIntro(f.amount),
        rows: rows([
          [m.item, facts.item],
          [m.invoiceNumber, facts.invoice_number],
          [m.refundReason, facts.reason],
        ]),
      };
  }
}

/** The rows whose value is known. */
const rows = (candidates: [string, string | null | undefined | false][]): Rows =>
  candidates.filter((row): row is [string, string] => typeof row[1] === 'string' && row[1] !== '');

function plainText(content: Content, m: EmailMessages, merchant: Merchant, link: EmailLink | null): string {
  const lines = [content.heading, '', content.intro, ''];
  for (const [label, value] of content.rows) lines.push(`${label}: ${value}`);
  if (link) lines.push('', `${link.label}: ${link.url}`, ...(link.note ? [link.note] : []));
  lines.push('', '--', m.footer(merchant.name));
  return `${lines.join('\n').replace(/\n{3,}/g, '\n\n')}\n`;
}

/** `#rrggbb`, or the platform's blue when the merchant set none (or something else). */
const accentOf = (merchant: Merchant) =>
  merchant.brand_color && /^#[0-9a-fA-F]{6}$/.test(merchant.brand_color) ? merchant.brand_color : '#2563eb';

/** A logo only over https: an email client loads it from the buyer's device. */
const logoOf = (merchant: Merchant) => (merchant.logo_url?.startsWith('https://') ? merchant.logo_url : null);

function htmlBody(
  content: Content,
  m: EmailMessages,
  merchant: Merchant,
  link: EmailLink | null,
  lang: PageLanguage,
): Html {
  const accent = accentOf(merchant);
  const logo = logoOf(merchant);
  return html`<!doctype html>
    <html lang="${lang}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width,initial-scale=1" />
        <title>${content.subject}</title>
      </head>
      <body
        style="margin:0;padding:0;background:#f4f4f5;font-family:-apple-system,'Segoe UI','PingFang TC','Noto Sans TC','Microsoft JhengHei',sans-serif;color:#18181b"
      >
        <table
          role="presentation"
          width="100%"
          cellpadding="0"
          cellspacing="0"
          style="background:#f4f4f5;padding:24px 12px"
        >
          <tr>
            <td align="center">
              <table
                role="presentation"
                width="100%"
                cellpadding="0"
                cellspacing="0"
                style="max-width:560px;background:#ffffff;border-radius:8px;border-top:4px solid ${accent}"
              >
                <tr>
                  <td style="padding:24px 24px 8px">
                    ${
                      logo
                        ? html`<img
                            src="${logo}"
                            alt="${merchant.name}"
                            height="40"
                            style="display:block;max-height:40px;border:0"
                          />`
                        : html`<strong style="font-size:18px">${merchant.name}</strong>`
                    }
                  </td>
                </tr>
                <tr>
                  <td style="padding:8px 24px 0">
                    <h1 style="margin:0 0 12px;font-size:20px;line-height:1.4">${content.heading}</h1>
                    <p style="margin:0 0 16px;font-size:15px;line-height:1.6">${content.intro}</p>
                  </td>
                </tr>
                ${
                  content.rows.length > 0 &&
                  html`<tr>
                    <td style="padding:0 24px 8px">
                      <table
                        role="presentation"
                        width="100%"
                        cellpadding="0"
                        cellspacing="0"
                        style="font-size:14px;line-height:1.5"
                      >
                        ${content.rows.map(
                          ([label, value]) =>
                            html`<tr>
                              <td style="padding:6px 12px 6px 0;color:#52525b;white-space:nowrap;vertical-align:top">
                                ${label}
                              </td>
                              <td style="padding:6px 0;text-align:right;word-break:break-word">${value}</td>
                            </tr>`,
                        )}
                      </table>
                    </td>
                  </tr>`
                }
                ${
                  link &&
                  html`<tr>
                    <td style="padding:16px 24px 8px">
                      <a
                        href="${link.url}"
                        style="display:inline-block;background:${accent};color:#ffffff;text-decoration:none;padding:12px 20px;border-radius:6px;font-weight:600"
                        >${link.label}</a
                      >
                      ${link.note && html`<p style="margin:8px 0 0;font-size:13px;color:#52525b">${link.note}</p>`}
                    </td>
                  </tr>`
                }
                <tr>
                  <td style="padding:16px 24px 24px;font-size:12px;color:#71717a">${m.footer(merchant.name)}</td>
                </tr>
              </table>
            </td>
          </tr>
        </table>
      </body>
    </html>`;
}
