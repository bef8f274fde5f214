import { einvoiceViolations, isValidTaxId } from './einvoice-choice';

describe('Taiwan business tax id (統一編號) check digit', () => {
  it.each([
    ['04595257', 'a real number, total divisible by 10'],
    ['22099131', 'a real number'],
    ['12345601', 'total 25: divisible by 5 only (MOF 2023 rule)'],
    ['10458575', '7th digit 7, total 30 with 28 counted as 10'],
    ['10458574', '7th digit 7, total 29: valid only with 28 counted as 1'],
    ['12345675', '7th digit 7, total 39: valid only with 28 counted as 1'],
  ])('accepts %s (%s)', (id) => {
    expect(isValidTaxId(id)).toBe(true);
  });
  it.each([
    ['04595258', 'a wrong check digit'],
    ['12345678', 'a wrong check digit'],
    ['10458576', '7th digit 7, neither way'],
    ['0459525', '7 digits'],
    ['045952570', '9 digits'],
    ['0459525A', 'a letter'],
    ['', 'empty'],
  ])('refuses %s (%s)', (id) => {
    expect(isValidTaxId(id)).toBe(false);
  });
});

describe('e-invoice choice formats', () => {
  const codes = (e: Parameters<typeof einvoiceViolations>[0]) =>
    einvoiceViolations(e).map((d) => `${d.path}: ${d.code}`);
  it('accepts good values of every type', () => {
    expect(codes({ type: 'B2B', tax_id: '04595257' })).toEqual([]);
    expect(codes({ type: 'MOBILE_BARCODE', carrier: '/AB+-.12' })).toEqual([]);
    expect(codes({ type: 'CITIZEN_CERTIFICATE', carrier: 'AB12345678901234' })).toEqual([]);
    expect(codes({ type: 'DONATION', donation_code: '123' })).toEqual([]);
    expect(codes({ type: 'DONATION', donation_code: '1234567' })).toEqual([]);
    expect(codes(undefined)).toEqual([]);
  });
  it('names the field and the rule of a bad value', () => {
    expect(codes({ type: 'B2B', tax_id: '04595258' })).toEqual(['einvoice.tax_id: invalid_tax_id']);
    expect(codes({ type: 'MOBILE_BARCODE', carrier: 'AB+-.123' })).toEqual([
      'einvoice.carrier: invalid_mobile_barcode',
    ]);
    expect(codes({ type: 'MOBILE_BARCODE', carrier: '/ab+-.12' })).toEqual([
      'einvoice.carrier: invalid_mobile_barcode',
    ]);
    expect(codes({ type: 'MOBILE_BARCODE', carrier: '/AB+-.123' })).toEqual([
      'einvoice.carrier: invalid_mobile_barcode',
    ]);
    expect(codes({ type: 'CITIZEN_CERTIFICATE', carrier: 'ab12345678901234' })).toEqual([
      'einvoice.carrier: invalid_citizen_certificate',
    ]);
    expect(codes({ type: 'CITIZEN_CERTIFICATE', carrier: 'AB1234567890123' })).toEqual([
      'einvoice.carrier: invalid_citizen_certificate',
    ]);
    expect(codes({ type: 'DONATION', donation_code: '12' })).toEqual(['einvoice.donation_code: invalid_donation_code']);
    expect(codes({ type: 'DONATION', donation_code: '12345678' })).toEqual([
      'einvoice.donation_code: invalid_donation_code',
    ]);
  });
});
