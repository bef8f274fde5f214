import { finalInvoiceId, renewalInvoiceId } from './ids';

describe('renewal invoice id', () => {
  it('is one id per subscription and period, unguessable in form', () => {
    const id = renewalInvoiceId('sub_1', '2026-02-28T10:00:00.000Z');
    expect(id).toMatch(/^in_[0-9A-Za-z]{24}$/);
    expect(renewalInvoiceId('sub_1', '2026-02-28T10:00:00.000Z')).toBe(id);
    expect(renewalInvoiceId('sub_1', '2026-03-31T10:00:00.000Z')).not.toBe(id);
    expect(renewalInvoiceId('sub_2', '2026-02-28T10:00:00.000Z')).not.toBe(id);
  });
});

describe('final invoice id', () => {
  it('is one id per subscription, apart from its renewal invoices', () => {
    const id = finalInvoiceId('sub_1');
    expect(id).toMatch(/^in_[0-9A-Za-z]{24}$/);
    expect(finalInvoiceId('sub_1')).toBe(id);
    expect(finalInvoiceId('sub_2')).not.toBe(id);
    expect(renewalInvoiceId('sub_1', '2026-02-28T10:00:00.000Z')).not.toBe(id);
  });
});
