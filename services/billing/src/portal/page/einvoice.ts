import type { Einvoice as EinvoiceChoice } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import {
  type EinvoiceField,
  type EinvoiceForm,
  type Html,
  einvoiceFormChoice,
  einvoiceFormOf,
  formBodies,
  html,
  readEinvoiceForm,
} from '@billing/service';
import type { Express, Response } from 'express';
import { chooseEinvoice } from '../../einvoices/choice';
import { type PortalEinvoices, TEXT, portalEinvoices } from './einvoice-view';
import { openPortal } from './access';
import { postForm } from './html';
import type { OpenPortal } from './open-portal';
import { portalPage } from './render';
import { backToPortal, notFoundPage } from './respond';

const PATH = '/portal/:session_id/:token/einvoice';
const form = formBodies('10kb');

type Problem = keyof (typeof TEXT)['en']['invalid'];

/** What each field refused says, by the rule it breaks. */
const PROBLEM_OF: Record<EinvoiceField | 'type', Problem> = {
  barcode: 'invalid_mobile_barcode',
  certificate: 'invalid_citizen_certificate',
  donation_code: 'invalid_donation_code',
  tax_id: 'invalid_tax_id',
  company_name: 'company_name_required',
  type: 'choose',
};

/**
 * The choice a posted form makes (read and checked as checkout's pages do), or the code of what
 * is wrong with it. The portal also asks a company's name: it is printed on the invoice.
 */
export function choiceFromForm(
  posted: Record<string, unknown>,
  donationOffered: boolean,
): { choice: EinvoiceChoice } | { problem: Problem } {
  const form = readEinvoiceForm(posted);
  if (!form) return { problem: 'choose' };
  const outcome = einvoiceFormChoice(form, donationOffered);
  if ('invalid' in outcome) return { problem: PROBLEM_OF[outcome.invalid] };
  if (outcome.choice.type === 'B2B' && !outcome.choice.company_name) return { problem: 'company_name_required' };
  return outcome;
}

function renderChoiceForm(portal: OpenPortal, einvoices: PortalEinvoices, form: EinvoiceForm, error?: string): string {
  const t = TEXT[portal.locale];
  const chosen = form.type;
  const option = (type: string, label: string, extra: Html | '' = '') =>
    html`<div class="choice">
      <label
        ><input type="radio" name="einvoice_type" value="${type}" ${chosen === type ? html` checked` : ''} />
        ${label}</label
      >
      ${extra}
    </div>`;
  const input = (field: EinvoiceField, label: string, attributes: Html | '' = '') =>
    html`<label class="sub" for="field-einvoice_${field}">${label}</label>
      <input
        id="field-einvoice_${field}"
        name="einvoice_${field}"
        type="text"
        value="${form[field] ?? ''}"
        ${attributes}
      />`;
  const body = html`${option('MEMBER', t.member)}
    ${option('MOBILE_BARCODE', t.mobile, input('barcode', t.barcode, html` placeholder="/ABC+123" autocapitalize="characters"`))}
    ${option('CITIZEN_CERTIFICATE', t.certificate, input('certificate', t.certificateNumber, html` placeholder="AB12345678901234"`))}
    ${einvoices.donationOffered ? option('DONATION', t.donation, input('donation_code', t.donationCode, html` inputmode="numeric"`)) : ''}
    ${option('B2B', t.company, html`${input('tax_id', t.taxId, html` inputmode="numeric" maxlength="8"`)}${input('company_name', t.companyName, html` maxlength="255"`)}`)}
    <button type="submit" class="wide" id="save-einvoice">${t.save}</button>`;
  return portalPage(
    portal,
    t.title,
    html`<h1>${t.title}</h1>
      <section class="card" style="max-width:30rem">
        <p class="muted">${t.intro}</p>
        ${error ? html`<p class="error" role="alert" id="error">${error}</p>` : ''}
        ${postForm(`${portal.base}/einvoice`, portal.csrfToken, body, html`id="einvoice-form"`)}
      </section>
      <p><a class="back" href="${portal.base}">← ${portal.t.manageTitle}</a></p>`,
  );
}

/**
 * `/portal/<session>/<token>/einvoice`: the customer changes where the e-invoices of their later
 * payments (renewals, proration charges) go. Bad input shows the form again (422) and changes
 * nothing. Not found while the organization issues no e-invoices.
 */
export function mountPortalEinvoicePages(app: Express, context: ServiceContext): void {
  const send = (
    res: Response,
    portal: OpenPortal,
    einvoices: PortalEinvoices,
    status: number,
    form: EinvoiceForm,
    error?: string,
  ) =>
    res
      .status(status)
      .type('html')
      .send(renderChoiceForm(portal, einvoices, form, error));

  app.get(PATH, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const einvoices = await portalEinvoices(context, portal);
    if (!einvoices) return notFoundPage(res, portal);
    send(res, portal, einvoices, 200, einvoiceFormOf(einvoices.choice));
  });

  app.post(PATH, form, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const einvoices = await portalEinvoices(context, portal);
    if (!einvoices) return notFoundPage(res, portal);
    const posted = (req.body ?? {}) as Record<string, unknown>;
    const outcome = choiceFromForm(posted, einvoices.donationOffered);
    if ('problem' in outcome) {
      const typed = readEinvoiceForm(posted) ?? einvoiceFormOf(einvoices.choice);
      return send(res, portal, einvoices, 422, typed, TEXT[portal.locale].invalid[outcome.problem]);
    }
    const now = context.now();
    await chooseEinvoice(context.store, null, portal.tenant, portal.session.customer_id, outcome.choice, now);
    backToPortal(res, portal, { notice: 'einvoice_saved' });
  });
}
