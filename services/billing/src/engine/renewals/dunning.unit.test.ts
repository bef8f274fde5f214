import { nextRetryAt } from './dunning';

describe('dunning schedule', () => {
  it('retries 3, 5 and 7 days after the first failure, then never', () => {
    const opened = '2026-02-28T10:00:00.000Z';
    expect([1, 2, 3, 4].map((attempt) => nextRetryAt(opened, attempt, [3, 5, 7])?.toISOString() ?? null)).toEqual([
      '2026-03-03T10:00:00.000Z',
      '2026-03-05T10:00:00.000Z',
      '2026-03-07T10:00:00.000Z',
      null,
    ]);
  });

  it("follows the organization's retry days", () => {
    const opened = '2026-02-28T10:00:00.000Z';
    expect([1, 2].map((attempt) => nextRetryAt(opened, attempt, [1])?.toISOString() ?? null)).toEqual([
      '2026-03-01T10:00:00.000Z',
      null,
    ]);
  });
});
