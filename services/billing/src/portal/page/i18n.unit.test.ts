import { formatDate } from '@billing/service';
import { billingPeriod, localeFor } from './i18n';

describe('the portal page’s language', () => {
  it.each([
    [null, undefined, 'en'],
    [null, 'zh-TW,zh;q=0.9,en;q=0.8', 'zh-TW'],
    [null, 'zh-Hant', 'zh-TW'],
    [null, 'en-US,zh;q=0.5', 'en'],
    [null, 'fr-FR,zh;q=0.4,en;q=0.3', 'zh-TW'],
    [null, 'ja, en;q=0', 'en'],
    ['en', 'zh-TW', 'en'],
    ['zh-TW', 'en', 'zh-TW'],
  ] as const)('session locale %s with Accept-Language %s is %s', (session, header, expected) =>
    expect(localeFor(session, header)).toBe(expected),
  );

  it('writes dates as calendar days in Taipei, through the pages’ kit', () => {
    expect(formatDate('2026-12-22T17:00:00.000Z', { lang: 'en' })).toBe('23 Dec 2026');
    expect(formatDate('2026-12-22T17:00:00.000Z', { lang: 'zh-TW' })).toBe('2026年12月23日');
  });

  it('names billing periods in both languages', () => {
    expect(billingPeriod('en', 'month', 1)).toBe('per month');
    expect(billingPeriod('en', 'month', 3)).toBe('every 3 months');
    expect(billingPeriod('zh-TW', 'year', 1)).toBe('每年');
    expect(billingPeriod('zh-TW', 'month', 3)).toBe('每 3 個月');
  });
});
