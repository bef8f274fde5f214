import { nextPeriodEnd, addInterval, periodEnd, trialEnd } from './period';

const at = (iso: string) => new Date(iso);
const iso = (d: Date) => d.toISOString();

describe('billing calendar', () => {
  describe('months', () => {
    it.each([
      ['2026-01-15T10:30:00.000Z', 1, '2026-02-15T10:30:00.000Z'],
      ['2026-01-31T08:00:00.000Z', 1, '2026-02-28T08:00:00.000Z'],
      ['2028-01-31T08:00:00.000Z', 1, '2028-02-29T08:00:00.000Z'],
      ['2026-03-31T00:00:00.000Z', 1, '2026-04-30T00:00:00.000Z'],
      ['2026-11-30T12:00:00.000Z', 3, '2027-02-28T12:00:00.000Z'],
      ['2026-12-31T23:59:59.999Z', 1, '2027-01-31T23:59:59.999Z'],
      ['2026-08-31T00:00:00.000Z', 6, '2027-02-28T00:00:00.000Z'],
      ['2026-01-01T00:00:00.000Z', 0, '2026-01-01T00:00:00.000Z'],
    ])('%s + %i month(s) = %s', (start, count, end) => {
      expect(iso(addInterval(at(start), 'month', count))).toBe(end);
    });

    it('counts later periods from the anchor, not from a clamped end', () => {
      const anchor = at('2026-01-31T09:00:00.000Z');
      expect(iso(periodEnd(anchor, 'month', 1, 1))).toBe('2026-02-28T09:00:00.000Z');
      expect(iso(periodEnd(anchor, 'month', 1, 2))).toBe('2026-03-31T09:00:00.000Z');
      expect(iso(periodEnd(anchor, 'month', 1, 3))).toBe('2026-04-30T09:00:00.000Z');
    });
  });

  describe('years', () => {
    it('clamps 29 February to 28 February', () =>
      expect(iso(addInterval(at('2028-02-29T00:00:00.000Z'), 'year', 1))).toBe('2029-02-28T00:00:00.000Z'));
    it('keeps 29 February four years on', () =>
      expect(iso(addInterval(at('2028-02-29T00:00:00.000Z'), 'year', 4))).toBe('2032-02-29T00:00:00.000Z'));
    it('is twelve months', () =>
      expect(iso(addInterval(at('2026-05-10T01:02:03.000Z'), 'year', 2))).toBe('2028-05-10T01:02:03.000Z'));
  });

  describe('days and weeks', () => {
    it('adds whole UTC days across a month end', () =>
      expect(iso(addInterval(at('2026-01-30T10:00:00.000Z'), 'day', 3))).toBe('2026-02-02T10:00:00.000Z'));
    it('adds seven days per week', () =>
      expect(iso(addInterval(at('2026-02-25T00:00:00.000Z'), 'week', 2))).toBe('2026-03-11T00:00:00.000Z'));
    it('ends a trial after whole days', () =>
      expect(iso(trialEnd(at('2026-02-27T12:00:00.000Z'), 14))).toBe('2026-03-13T12:00:00.000Z'));
  });

  it('rejects a fractional or negative count', () => {
    expect(() => addInterval(at('2026-01-01T00:00:00.000Z'), 'month', 1.5)).toThrow(RangeError);
    expect(() => addInterval(at('2026-01-01T00:00:00.000Z'), 'day', -1)).toThrow(RangeError);
  });
});

describe('nextPeriodEnd', () => {
  const anchor = new Date('2026-01-31T10:00:00.000Z');
  it('is the next end counted from the anchor, not from a clamped end', () => {
    expect(nextPeriodEnd(anchor, 'month', 1, new Date('2026-02-28T10:00:00.000Z')).toISOString()).toBe(
      '2026-03-31T10:00:00.000Z',
    );
    expect(nextPeriodEnd(anchor, 'month', 1, new Date('2026-03-31T10:00:00.000Z')).toISOString()).toBe(
      '2026-04-30T10:00:00.000Z',
    );
    expect(nextPeriodEnd(anchor, 'month', 3, new Date('2026-04-30T10:00:00.000Z')).toISOString()).toBe(
      '2026-07-31T10:00:00.000Z',
    );
  });
});
