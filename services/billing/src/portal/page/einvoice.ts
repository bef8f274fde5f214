import {
  type Einvoice as EinvoiceChoice,
  Einvoice as EinvoiceChoiceSchema,
  einvoiceViolations,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { type Html, formBodies, html } from '@billing/service';
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

/** The choice a posted form makes, or the code of what is wrong with it. */
export function choiceFromForm(
  fields: Record<string, unknown>,
  donationOffered: boolean,
): { choice: EinvoiceChoice } | { problem: keyof (typeof TEXT)['en']['invalid'] } {
  const text = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string).trim() : '');
  const candidates: Record<string, unknown> = {
    MEMBER: { type: 'MEMBER' },
    MOBILE_BARCODE: { type: 'MOBILE_BARCODE', carrier: text('mobile_barcode').toUpperCase() },
    CITIZEN_CERTIFICATE: { type: 'CITIZEN_CERTIFICATE', carrier: text('citizen_certificate').toUpperCase() },
    DONATION: donationOffered ? { type: 'DONATION', donation_code: text('donation_code') } : undefined,
    B2B: { type: 'B2B', tax_id: text('tax_id'), company_name: text('company_name') || undefined },
  };
  const type = text('einvoice_type');
  const candidate = Object.hasOwn(candidates, type) ? candidates[type] : undefined;
  if (!candidate) return { problem: 'choose' };
  const parsed = EinvoiceChoiceSchema.safeParse(candidate);
  if (!parsed.success) return { problem: problemOfShape(type) };
  const violation = einvoiceViolations(parsed.data)[0];
  if (violation) return { problem: violation.code as keyof (typeof TEXT)['en']['invalid'] };
  if (parsed.data.type === 'B2B' && !parsed.data.company_name) return { problem: 'company_name_required' };
  return { choice: parsed.data };
}

/** A field too long for its schema is as wrong as a malformed one. */
function problemOfShape(type: string): keyof (typeof TEXT)['en']['invalid'] {
  const byType: Record<string, keyof (typeof TEXT)['en']['invalid']> = {
    MOBILE_BARCODE: 'invalid_mobile_barcode',
    CITIZEN_CERTIFICATE: 'invalid_citizen_certificate',
    DONATION: 'invalid_donation_code',
    B2B: 'invalid_tax_id',
  };
  return byType[type] ?? 'choose';
}

function renderChoiceForm(
  portal: OpenPortal,
  einvoices: PortalEinvoices,
  fields: Record<string, string>,
  error?: string,
): string {
  const t = TEXT[portal.locale];
  const chosen = fields.einvoice_type ?? einvoices.choice.type;
  const option = (type: string, label: string, extra: Html | '' = '') =>
    html`<div class="choice">
      <label
        ><input type="radio" name="einvoice_type" value="${type}" ${chosen === type ? html` checked` : ''} />
        ${label}</label
      >
      ${extra}
    </div>`;
  const input = (name: string, label: string, attributes: Html | '' = '') =>
    html`<label class="sub" for="field-${name}">${label}</label>
      <input id="field-${name}" name="${name}" type="text" value="${fields[name] ?? ''}" ${attributes} />`;
  const body = html`${option('MEMBER', t.member)}
    ${option('MOBILE_BARCODE', t.mobile, input('mobile_barcode', t.barcode, html` placeholder="/ABC+123" autocapitalize="characters"`))}
    ${option('CITIZEN_CERTIFICATE', t.certificate, input('citizen_certificate', t.certificateNumber, html` placeholder="AB12345678901234"`))}
    ${einvoices.donationOffered ? option('DONATION', t.donation, input('donation_code', t.donationCode, html` inputmode="numeric"`)) : ''}
    ${option('B2B', t.company, html`${input('tax_id', t.taxId, html` inputmode="numeric" maxlength="8"`)}${input('company_name', t.companyName)}`)}
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

/** The fields of a choice, to show it in the form. */
function fieldsOf(choice: EinvoiceChoice): Record<string, string> {
  switch (choice.type) {
    case 'MOBILE_BARCODE':
      return { einvoice_type: choice.type, mobile_barcode: choice.carrier };
    case 'CITIZEN_CERTIFICATE':
      return { einvoice_type: choice.type, citizen_certificate: choice.carrier };
    case 'DONATION':
      return { einvoice_type: choice.type, donation_code: choice.donation_code };
    case 'B2B':
      return { einvoice_type: choice.type, tax_id: choice.tax_id, company_name: choice.company_name ?? '' };
    default:
      return { einvoice_type: choice.type };
  }
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
    fields: Record<string, string>,
    error?: string,
  ) =>
    res
      .status(status)
      .type('html')
      .send(renderChoiceForm(portal, einvoices, fields, error));

  app.get(PATH, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const einvoices = await portalEinvoices(context, portal);
    if (!einvoices) return notFoundPage(res, portal);
    send(res, portal, einvoices, 200, fieldsOf(einvoices.choice));
  });

  app.post(PATH, form, async (req, res) => {
    const portal = await openPortal(context, req, res);
    if (!portal) return;
    const einvoices = await portalEinvoices(context, portal);
    if (!einvoices) return notFoundPage(res, portal);
    const fields = Object.fromEntries(
      Object.entries((req.body ?? {}) as Record<string, unknown>).flatMap(([k, v]) =>
        typeof v === 'string' ? [[k, v.slice(0, 300)]] : [],
      ),
    );
    const outcome = choiceFromForm(fields, einvoices.donationOffered);
    if ('problem' in outcome)
      return send(res, portal, einvoices, 422, fields, TEXT[portal.locale].invalid[outcome.problem]);
    const now = context.now();
    await chooseEinvoice(context.store, null, portal.tenant, portal.session.customer_id, outcome.choice, now);
    backToPortal(res, portal, { notice: 'einvoice_saved' });
  });
}
