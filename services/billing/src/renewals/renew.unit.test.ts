import { nextRetryAt, renewalInvoiceId } from './renew';

describe('dunning schedule', () => {
  it('retries 3, 5 and 7 days after the first failure, then never', () => {
    const opened = '2026-02-28T10:00:00.000Z';
    expect([1, 2, 3, 4].map((attempt) => nextRetryAt(opened, attempt)?.toISOString() ?? null)).toEqual([
      '2026-03-03T10:00:00.000Z',
      '2026-03-05T10:00:00.000Z',
      '2026-03-07T10:00:00.000Z',
      null,
    ]);
  });
});

describe('renewal invoice id', () => {
  it('is one id per subscription and period, unguessable in form', () => {
    const id = renewalInvoiceId('sub_1', '2026-02-28T10:00:00.000Z');
    expect(id).toMatch(/^in_[0-9A-Za-z]{24}$/);
    expect(renewalInvoiceId('sub_1', '2026-02-28T10:00:00.000Z')).toBe(id);
    expect(renewalInvoiceId('sub_1', '2026-03-31T10:00:00.000Z')).not.toBe(id);
    expect(renewalInvoiceId('sub_2', '2026-02-28T10:00:00.000Z')).not.toBe(id);
  });
});
