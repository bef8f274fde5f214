import { deadlineOf, retryDelayMs, splitAllowance, splitTax, voidableAt, warnAtOf } from './rules';

const company = { type: 'B2B' as const, tax_id: '04595257', company_name: 'Acme' };
const phone = { type: 'MOBILE_BARCODE' as const, carrier: '/ABC+123' };

describe('the B2B tax split', () => {
  it.each([
    [105, 100, 5],
    [299, 285, 14], // 284.76 -> 285
    [1, 1, 0], // 0.952 -> 1
    [2, 2, 0], // 1.905 -> 2
    [10, 10, 0], // 9.524 -> 10
    [21, 20, 1], // 20 exactly
    [31, 30, 1], // 29.524 -> 30
    [1050, 1000, 50],
    [0, 0, 0],
  ])('given a company paying %i taxed, the untaxed amount is %i and the tax %i', (total, sales, tax) => {
    expect(splitTax(total, company, 'TAXED')).toEqual({ salesAmount: sales, taxAmount: tax });
  });

  it('gives the nearest whole TWD to total / 1.05 and a tax that makes up the total, for every total to 5000', () => {
    // A tie cannot happen: total * 200 = 210k + 105 has an even left side and an odd right one.
    for (let total = 0; total <= 5000; total += 1) {
      const { salesAmount, taxAmount } = splitTax(total, company, 'TAXED');
      expect(salesAmount + taxAmount).toBe(total);
      expect(Math.abs(salesAmount - total / 1.05)).toBeLessThanOrEqual(0.5);
    }
  });

  it('given a consumer, or a zero-rated or exempt sale, the whole is the sales amount and no tax', () => {
    expect(splitTax(299, phone, 'TAXED')).toEqual({ salesAmount: 299, taxAmount: 0 });
    expect(splitTax(299, company, 'ZERO_RATED')).toEqual({ salesAmount: 299, taxAmount: 0 });
    expect(splitTax(299, company, 'EXEMPT')).toEqual({ salesAmount: 299, taxAmount: 0 });
  });

  it('splits an allowance for a consumer too, unless the sale is zero-rated or exempt', () => {
    expect(splitAllowance(100, 'TAXED')).toEqual({ salesAmount: 95, taxAmount: 5 });
    expect(splitAllowance(100, 'EXEMPT')).toEqual({ salesAmount: 100, taxAmount: 0 });
  });

  it('refuses an amount that is not whole TWD', () => {
    expect(() => splitTax(1.5, company, 'TAXED')).toThrow('whole TWD');
  });
});

describe('deadlines and retries', () => {
  const paidAt = new Date('2026-11-27T01:00:00Z');

  it('gives a consumer invoice 48 hours and a company one 7 days, warned at three quarters of the time', () => {
    expect(deadlineOf(paidAt, phone).toISOString()).toBe('2026-11-29T01:00:00.000Z');
    expect(deadlineOf(paidAt, company).toISOString()).toBe('2026-12-04T01:00:00.000Z');
    expect(warnAtOf(paidAt, deadlineOf(paidAt, phone)).toISOString()).toBe('2026-11-28T13:00:00.000Z');
  });

  it('waits 1, 2, 4 ... minutes between attempts, never more than an hour', () => {
    expect([1, 2, 3, 4, 7, 20].map(retryDelayMs)).toEqual([60_000, 120_000, 240_000, 480_000, 3_600_000, 3_600_000]);
  });
});

describe('voiding by the two-month filing period, on Taipei dates', () => {
  it('voids within the period the invoice was issued in, and not after it', () => {
    const issued = new Date('2026-11-05T03:00:00Z');
    expect(voidableAt(issued, new Date('2026-12-31T15:59:00Z'))).toBe(true); // Dec 31 23:59 Taipei
    expect(voidableAt(issued, new Date('2026-12-31T16:00:00Z'))).toBe(false); // Jan 1 00:00 Taipei
    expect(voidableAt(new Date('2026-10-31T16:30:00Z'), new Date('2026-11-02T00:00:00Z'))).toBe(true); // Nov 1 Taipei
    expect(voidableAt(null, new Date())).toBe(true);
  });
});
