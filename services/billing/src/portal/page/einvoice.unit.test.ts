import { choiceFromForm } from './einvoice';

describe("the portal's e-invoice form", () => {
  it('given each kind of choice well typed, then it is the choice, carriers upper-cased', () => {
    expect(choiceFromForm({ einvoice_type: 'MEMBER' }, true)).toEqual({ choice: { type: 'MEMBER' } });
    expect(choiceFromForm({ einvoice_type: 'MOBILE_BARCODE', einvoice_barcode: ' /abc+123 ' }, true)).toEqual({
      choice: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
    });
    expect(
      choiceFromForm({ einvoice_type: 'CITIZEN_CERTIFICATE', einvoice_certificate: 'ab12345678901234' }, true),
    ).toEqual({
      choice: { type: 'CITIZEN_CERTIFICATE', carrier: 'AB12345678901234' },
    });
    expect(choiceFromForm({ einvoice_type: 'DONATION', einvoice_donation_code: '8585' }, true)).toEqual({
      choice: { type: 'DONATION', donation_code: '8585' },
    });
    expect(
      choiceFromForm({ einvoice_type: 'B2B', einvoice_tax_id: '04595257', einvoice_company_name: 'Acme' }, true),
    ).toEqual({
      choice: { type: 'B2B', tax_id: '04595257', company_name: 'Acme' },
    });
  });

  it('given a malformed field, then the problem names it, the barcode too long for its schema included', () => {
    expect(choiceFromForm({ einvoice_type: 'MOBILE_BARCODE', einvoice_barcode: '/ABC' }, true)).toEqual({
      problem: 'invalid_mobile_barcode',
    });
    expect(choiceFromForm({ einvoice_type: 'MOBILE_BARCODE', einvoice_barcode: '/ABC+1234567' }, true)).toEqual({
      problem: 'invalid_mobile_barcode',
    });
    expect(
      choiceFromForm({ einvoice_type: 'B2B', einvoice_tax_id: '12345678', einvoice_company_name: 'Acme' }, true),
    ).toEqual({
      problem: 'invalid_tax_id',
    });
    expect(choiceFromForm({ einvoice_type: 'B2B', einvoice_tax_id: '04595257' }, true)).toEqual({
      problem: 'company_name_required',
    });
    expect(choiceFromForm({ einvoice_type: 'DONATION', einvoice_donation_code: '12' }, true)).toEqual({
      problem: 'invalid_donation_code',
    });
  });

  it('given a donation where the organization offers none, or no choice at all, then it asks to choose', () => {
    expect(choiceFromForm({ einvoice_type: 'DONATION', einvoice_donation_code: '8585' }, false)).toEqual({
      problem: 'choose',
    });
    expect(choiceFromForm({}, true)).toEqual({ problem: 'choose' });
    expect(choiceFromForm({ einvoice_type: 'PAPER' }, true)).toEqual({ problem: 'choose' });
    expect(choiceFromForm({ einvoice_type: 'constructor' }, true)).toEqual({ problem: 'choose' });
  });
});
