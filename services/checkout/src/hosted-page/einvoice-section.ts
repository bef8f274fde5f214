import type { Einvoice } from '@billing/contracts';
import { type Html, html, raw } from '@billing/service';
import { EINVOICE_FORM_FIELDS, offeredEinvoiceChoices } from '@billing/service';
import type { EinvoiceSection } from './einvoice-form';
import type { EinvoiceField, Messages } from './messages';

/** How each field is typed: phones get the right keyboard, and nothing is autofilled into a carrier. */
const INPUTS: Record<EinvoiceField, { maxlength: number; extra: Html }> = {
  barcode: {
    maxlength: 8,
    extra: html` autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="/ABC1234"`,
  },
  certificate: {
    maxlength: 16,
    extra: html` autocomplete="off" autocapitalize="characters" spellcheck="false" placeholder="AB12345678901234"`,
  },
  donation_code: { maxlength: 7, extra: html` autocomplete="off" inputmode="numeric"` },
  tax_id: { maxlength: 8, extra: html` autocomplete="off" inputmode="numeric" placeholder="12345678"` },
  company_name: { maxlength: 255, extra: html` autocomplete="organization"` },
};

const ERROR_ID = 'einvoice-error';

function fieldError(section: EinvoiceSection, field: EinvoiceField | 'type', t: Messages): Html | '' {
  if (section.invalid !== field) return '';
  return html`<p class="field-error" id="${ERROR_ID}">${t.einvoice.rules[field]}</p>`;
}

function input(section: EinvoiceSection, field: EinvoiceField, t: Messages): Html {
  const id = `field-einvoice_${field}`;
  const { maxlength, extra } = INPUTS[field];
  const value = section.form[field] ? html` value="${section.form[field]}"` : '';
  const invalid = section.invalid === field ? html` aria-invalid="true" aria-describedby="${ERROR_ID}"` : '';
  return html`<label for="${id}">${t.einvoice.fields[field]}</label>
    <input id="${id}" name="einvoice_${field}" type="text" maxlength="${maxlength}" ${extra}${value}${invalid} />
    ${fieldError(section, field, t)}`;
}

function choice(section: EinvoiceSection, type: Einvoice['type'], t: Messages): Html {
  const checked = section.form.type === type ? html` checked` : '';
  const hint = type === 'MEMBER' && html`<p class="hint muted" id="einvoice-member-hint">${t.einvoice.memberHint}</p>`;
  const described = type === 'MEMBER' ? html` aria-describedby="einvoice-member-hint"` : '';
  const fields = EINVOICE_FORM_FIELDS[type];
  return html`<div class="einvoice-choice">
    <label class="method"
      ><input type="radio" name="einvoice_type" value="${type}" ${checked}${described} />
      ${t.einvoice.choices[type]}</label
    >
    ${hint || ''}
    ${
      fields.length > 0
        ? html`<div class="einvoice-fields" data-einvoice-for="${type}">
            ${fields.map((field) => input(section, field, t))}
          </div>`
        : ''
    }
  </div>`;
}

/**
 * Without JavaScript every choice shows its fields (the server reads only the chosen one's);
 * with it, only the chosen choice's fields show.
 */
const SHOW_CHOSEN_FIELDS = raw(`<script>
  (function () {
    var section = document.getElementById('einvoice');
    function show() {
      var chosen = section.querySelector('input[name="einvoice_type"]:checked');
      var groups = section.querySelectorAll('[data-einvoice-for]');
      for (var i = 0; i < groups.length; i++) {
        groups[i].hidden = !chosen || groups[i].getAttribute('data-einvoice-for') !== chosen.value;
      }
    }
    section.addEventListener('change', show);
    show();
  })();
</script>`);

/** The e-invoice choices: the member carrier, a mobile barcode, a citizen certificate, a donation, a company. */
export function einvoiceSection(section: EinvoiceSection, t: Messages): Html {
  return html`<fieldset class="methods einvoice" id="einvoice">
      <legend>${t.einvoice.title}</legend>
      ${fieldError(section, 'type', t)}
      ${offeredEinvoiceChoices(section.donationOffered).map((type) => choice(section, type, t))}
    </fieldset>
    ${SHOW_CHOSEN_FIELDS}`;
}

/** The receipt's e-invoice: its number once billing issued it, else where it will go. */
export type ReceiptEinvoice = { number: string; randomCode: string | null; voided: boolean } | { issuedTo: Einvoice };

const row = (id: string, term: string, value: string) =>
  html`<div id="${id}">
    <dt>${term}</dt>
    <dd>${value}</dd>
  </div>`;

/** A sentence, not a value: under its term and across the receipt, where a long carrier still fits a line. */
const sentenceRow = (id: string, term: string, sentence: string) =>
  html`<div id="${id}" class="sentence">
    <dt>${term}</dt>
    <dd>${sentence}</dd>
  </div>`;

/** As printed on the paper copy: the track's two letters, a hyphen, the eight digits. */
const printedNumber = (number: string) =>
  /^[A-Z]{2}\d{8}$/.test(number) ? `${number.slice(0, 2)}-${number.slice(2)}` : number;

export function einvoiceReceiptRows(einvoice: ReceiptEinvoice, t: Messages): Html {
  const e = t.einvoice;
  if ('issuedTo' in einvoice) return sentenceRow('receipt-einvoice', e.title, e.issuedTo(einvoice.issuedTo));
  const number = printedNumber(einvoice.number) + (einvoice.voided ? e.voided : '');
  return html`${row('receipt-einvoice', e.number, number)}
  ${einvoice.randomCode ? row('receipt-random-code', e.randomCode, einvoice.randomCode) : ''}`;
}
