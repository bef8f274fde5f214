import { type Einvoice as EinvoiceChoice, type EinvoiceResource, type PortalLocale } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { type Html, einvoiceCarrierText, html } from '@billing/service';
import { customerChoice } from '../../einvoices/choice';
import { listEinvoices } from '../../einvoices/read-model';
import { storedEinvoiceSettings } from '../../einvoices/settings/einvoice-settings';
import type { OpenPortal } from './open-portal';

/** The customer's e-invoice choice as the portal shows it: null while the organization issues none. */
export type PortalEinvoices = {
  choice: EinvoiceChoice;
  donationOffered: boolean;
  /** The e-invoices of the customer's invoices, by invoice id. */
  byInvoice: Map<string, EinvoiceResource>;
};

export async function portalEinvoices(context: ServiceContext, portal: OpenPortal): Promise<PortalEinvoices | null> {
  const { store } = context;
  const { settings } = await storedEinvoiceSettings(store, portal.tenant);
  if (!settings.enabled) return null;
  const customerId = portal.session.customer_id;
  const [choice, { einvoices }] = await Promise.all([
    customerChoice(store, store.database, customerId),
    listEinvoices(store.database, store.tables.schema, portal.tenant, { limit: 24, customer_id: customerId }),
  ]);
  const byInvoice = new Map(einvoices.flatMap((e) => (e.invoice_id ? [[e.invoice_id, e] as const] : [])));
  return { choice: choice ?? { type: 'MEMBER' }, donationOffered: settings.donation_offered, byInvoice };
}

export const TEXT = {
  en: {
    title: 'E-invoice',
    intro: 'Where the uniform invoice (e-invoice) of your next payments goes.',
    change: 'Change',
    save: 'Save',
    member: 'Member carrier (sent by email)',
    mobile: 'Mobile barcode',
    certificate: 'Citizen digital certificate',
    donation: 'Donate the invoice',
    company: 'Company (with tax ID)',
    barcode: 'Barcode (/ and 7 characters)',
    certificateNumber: 'Certificate number',
    taxId: 'Tax ID (統一編號)',
    companyName: 'Company name',
    donationCode: 'Donation code',
    saved: 'Your e-invoice choice is saved.',
    randomCode: 'random code',
    coming: 'Being issued',
    voided: 'voided',
    carrier: 'Sent to',
    invalid: {
      invalid_mobile_barcode: 'A mobile barcode is "/" and 7 characters of 0-9, A-Z, ".", "+", "-".',
      invalid_citizen_certificate: 'A citizen certificate number is 2 capital letters and 14 digits.',
      invalid_donation_code: 'A donation code is 3 to 7 digits.',
      invalid_tax_id: 'That tax ID is not valid: check its 8 digits.',
      company_name_required: 'Enter the company name.',
      choose: 'Choose where the e-invoice goes.',
    },
  },
  'zh-TW': {
    title: '電子發票',
    intro: '之後每筆付款的電子發票開立方式。',
    change: '變更',
    save: '儲存',
    member: '會員載具（以電子郵件寄送）',
    mobile: '手機條碼',
    certificate: '自然人憑證',
    donation: '捐贈發票',
    company: '公司（需統一編號）',
    barcode: '條碼（/ 加 7 碼）',
    certificateNumber: '憑證號碼',
    taxId: '統一編號',
    companyName: '公司名稱',
    donationCode: '愛心碼',
    saved: '已儲存您的電子發票設定。',
    randomCode: '隨機碼',
    coming: '開立中',
    voided: '已作廢',
    carrier: '開立方式',
    invalid: {
      invalid_mobile_barcode: '手機條碼為「/」加 7 碼（0-9、A-Z、.、+、-）。',
      invalid_citizen_certificate: '自然人憑證號碼為 2 碼大寫英文字母加 14 碼數字。',
      invalid_donation_code: '愛心碼為 3 到 7 碼數字。',
      invalid_tax_id: '統一編號不正確，請檢查 8 碼數字。',
      company_name_required: '請輸入公司名稱。',
      choose: '請選擇發票開立方式。',
    },
  },
} as const;

export const einvoiceTexts = (locale: PortalLocale) => TEXT[locale];

/** The main page's section: where the next e-invoices go, and the way to change it. */
export function einvoiceSection(portal: OpenPortal, einvoices: PortalEinvoices | null): Html | '' {
  if (!einvoices) return '';
  const t = TEXT[portal.locale];
  return html`<h2>${t.title}</h2>
    <section class="card" id="einvoice">
      <div class="heading">
        <span id="einvoice-choice">${einvoiceCarrierText(einvoices.choice, portal.locale)}</span>
        <a class="button secondary" id="change-einvoice" href="${portal.base}/einvoice">${t.change}</a>
      </div>
    </section>`;
}

/** A receipt's e-invoice lines: its number and random code (or that it is coming), where it went, a void. */
export function einvoiceFacts(locale: PortalLocale, einvoice: EinvoiceResource | undefined): Array<[string, string]> {
  if (!einvoice) return [];
  const t = TEXT[locale];
  const number = einvoice.number ? `${einvoice.number} (${t.randomCode} ${einvoice.random_code ?? ''})` : t.coming;
  const rows: Array<[string, string]> = [
    [t.title, einvoice.status === 'voided' ? `${number} · ${t.voided}` : number],
    [t.carrier, einvoiceCarrierText(einvoice.buyer, locale)],
  ];
  return rows;
}
