import type { Einvoice as EinvoiceChoice } from '@billing/contracts';
import type { PageLanguage } from './dates';

/**
 * Where an e-invoice goes, in words for a buyer's page (the hosted checkout's thank-you, the
 * portal, receipts): the carrier and its number, the donation code, or the company's tax id.
 */
export function einvoiceCarrierText(choice: EinvoiceChoice, lang: PageLanguage): string {
  const zh = lang === 'zh-TW';
  switch (choice.type) {
    case 'MEMBER':
      return zh ? '會員載具（以電子郵件寄送）' : 'Member carrier (sent by email)';
    case 'MOBILE_BARCODE':
      return zh ? `手機條碼 ${choice.carrier}` : `Mobile barcode ${choice.carrier}`;
    case 'CITIZEN_CERTIFICATE':
      return zh ? `自然人憑證 ${choice.carrier}` : `Citizen certificate ${choice.carrier}`;
    case 'DONATION':
      return zh ? `捐贈（愛心碼 ${choice.donation_code}）` : `Donated (code ${choice.donation_code})`;
    case 'B2B': {
      const company = choice.company_name ? `${choice.company_name} ` : '';
      return zh ? `公司：${company}統一編號 ${choice.tax_id}` : `Company: ${company}tax ID ${choice.tax_id}`;
    }
    default: {
      const _exhaustive: never = choice;
      return '';
    }
  }
}
