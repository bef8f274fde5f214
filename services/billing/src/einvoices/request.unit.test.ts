import type { InvoiceLine } from '@billing/contracts';
import { descriptionOf } from './request';

const period = { start: '2026-03-01T00:00:00.000Z', end: '2026-04-01T00:00:00.000Z' };
const plan: InvoiceLine = { description: 'Pro (every month)', amount: 299, period, kind: 'subscription' };
const usage = (meter: string, quantity: number): InvoiceLine => ({
  description: `${meter} × ${quantity}`,
  amount: quantity,
  period,
  kind: 'usage',
  meter,
  quantity,
});

describe("an invoice's e-invoice item", () => {
  it('names the plan, and the meters of the usage it bills with it', () => {
    expect(descriptionOf({ number: 'INV-000001', lines: [plan] })).toBe('Pro (every month)');
    expect(descriptionOf({ number: 'INV-000001', lines: [plan, usage('api_calls', 13), usage('seats', 3)] })).toBe(
      'Pro (every month) + usage (api_calls, seats)',
    );
    expect(descriptionOf({ number: 'INV-000002', lines: [] })).toBe('Invoice INV-000002');
  });

  it("names the meters alone on a final invoice, which bills the last period's usage only", () => {
    expect(descriptionOf({ number: 'INV-000003', lines: [usage('api_calls', 3)] })).toBe('Usage (api_calls)');
  });
});
