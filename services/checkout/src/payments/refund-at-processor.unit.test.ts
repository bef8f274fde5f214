import { nextMorningInTaiwan } from './refund-at-processor';

describe('when a refund waiting for PAYUNi’s capture is asked again: 09:00 in Taiwan', () => {
  it.each([
    ['paid at 22:30 in Taiwan', '2026-11-26T14:30:00Z', '2026-11-27T01:00:00Z'],
    ['asked at 00:10, before the morning', '2026-11-26T16:10:00Z', '2026-11-27T01:00:00Z'],
    ['asked at 08:59:59', '2026-11-27T00:59:59Z', '2026-11-27T01:00:00Z'],
    ['asked at 09:00 exactly: the next morning', '2026-11-27T01:00:00Z', '2026-11-28T01:00:00Z'],
    ['asked at 10:00', '2026-11-27T02:00:00Z', '2026-11-28T01:00:00Z'],
  ])('%s', (_, now, expected) => {
    expect(nextMorningInTaiwan(new Date(now)).toISOString()).toBe(new Date(expected).toISOString());
  });
});
