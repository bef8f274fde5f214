import { formatDate, formatDateTime } from './dates';

describe('times of day', () => {
  it('shows the time in Asia/Taipei by default, with the zone', () => {
    expect(formatDateTime('2026-03-01T10:00:00.000Z')).toBe('2026-03-01 18:00 (GMT+8)');
    expect(formatDateTime(new Date('2026-03-01T10:00:00.000Z'))).toBe('2026-03-01 18:00 (GMT+8)');
  });

  it('puts an evening in UTC on the next day in Taipei', () => {
    const iso = '2026-02-28T16:30:00.000Z';
    expect(formatDateTime(iso)).toBe('2026-03-01 00:30 (GMT+8)');
    expect(formatDateTime(iso, { timeZone: 'UTC' })).toBe('2026-02-28 16:30 (UTC)');
    expect(formatDateTime('2026-12-31T16:00:00.000Z')).toBe('2027-01-01 00:00 (GMT+8)');
  });

  it('shows a zone behind UTC on the day before, with its offset at that instant', () => {
    expect(formatDateTime('2026-03-01T03:00:00.000Z', { timeZone: 'America/New_York' })).toBe(
      '2026-02-28 22:00 (GMT-5)',
    );
    expect(formatDateTime('2026-07-01T03:00:00.000Z', { timeZone: 'America/New_York' })).toBe(
      '2026-06-30 23:00 (GMT-4)',
    );
    expect(formatDateTime('2026-03-01T10:00:00.000Z', { timeZone: 'Asia/Kolkata' })).toBe(
      '2026-03-01 15:30 (GMT+5:30)',
    );
  });

  it('writes the zone in full-width parentheses in Traditional Chinese', () => {
    expect(formatDateTime('2026-03-01T10:00:00.000Z', { lang: 'zh-TW' })).toBe('2026-03-01 18:00（GMT+8）');
  });

  it('shows text that is no date as it came', () => {
    expect(formatDateTime('soon')).toBe('soon');
    expect(formatDate('soon')).toBe('soon');
  });
});

describe('calendar days', () => {
  it('is the day in Asia/Taipei, in the words of the language', () => {
    expect(formatDate('2026-12-22T17:00:00.000Z')).toBe('23 Dec 2026');
    expect(formatDate('2026-12-22T17:00:00.000Z', { lang: 'en' })).toBe('23 Dec 2026');
    expect(formatDate('2026-12-22T17:00:00.000Z', { lang: 'zh-TW' })).toBe('2026年12月23日');
    expect(formatDate('2026-12-22T17:00:00.000Z', { lang: 'en', month: 'long' })).toBe('23 December 2026');
  });

  it('crosses midnight by the zone, not by UTC', () => {
    expect(formatDate('2026-02-28T16:00:00.000Z')).toBe('1 Mar 2026');
    expect(formatDate('2026-02-28T15:59:59.999Z')).toBe('28 Feb 2026');
    expect(formatDate('2026-02-28T16:00:00.000Z', { timeZone: 'UTC' })).toBe('28 Feb 2026');
    expect(formatDate('2026-03-01T03:00:00.000Z', { timeZone: 'America/New_York' })).toBe('28 Feb 2026');
  });
});
