import { AdaptiveInFlightLimit } from './in-flight-limit';

const settings = { targetLatencyMs: 500, minInFlight: 4, maxInFlight: 16 };

const fill = (limit: AdaptiveInFlightLimit) => {
  let admitted = 0;
  while (limit.admit()) admitted++;
  return admitted;
};

describe('AdaptiveInFlightLimit', () => {
  it('starts at the maximum: it refuses nothing until responses are slow', () => {
    expect(new AdaptiveInFlightLimit(settings).limit).toBe(16);
  });

  it('admits up to the bound and refuses the next until one is released', () => {
    const limit = new AdaptiveInFlightLimit(settings);
    expect(fill(limit)).toBe(16);
    expect(limit.admit()).toBe(false);
    limit.release(100, 0);
    expect(limit.admit()).toBe(true);
  });

  it('admits payments of started sessions up to half again past the bound', () => {
    const limit = new AdaptiveInFlightLimit(settings);
    expect(fill(limit)).toBe(16);
    let finishing = 0;
    while (limit.admit(true)) finishing++;
    expect(finishing).toBe(8);
  });

  it('cuts the bound by a quarter for slow responses, once per target interval, down to the minimum', () => {
    const limit = new AdaptiveInFlightLimit(settings);
    fill(limit);
    limit.release(900, 1000);
    limit.release(900, 1100); // the same overload: not cut again
    expect(limit.limit).toBe(12);
    limit.release(900, 1500);
    expect(limit.limit).toBe(9);
    for (let at = 2000; at < 10_000; at += 500) {
      limit.admit();
      limit.release(900, at);
    }
    expect(limit.limit).toBe(4);
  });

  it('grows back with rounds of fast responses while the bound is in use, up to the maximum', () => {
    const limit = new AdaptiveInFlightLimit(settings);
    limit.admit();
    limit.release(900, 0);
    expect(limit.limit).toBe(12);
    const round = () => {
      const admitted = fill(limit);
      for (let i = 0; i < admitted; i++) limit.release(50, 1000);
    };
    for (let i = 0; i < 4; i++) round();
    expect(limit.limit).toBe(14);
    for (let i = 0; i < 50; i++) round();
    expect(limit.limit).toBe(16);
  });

  it('does not grow while the bound is not in use', () => {
    const limit = new AdaptiveInFlightLimit(settings);
    limit.admit();
    limit.release(900, 0);
    for (let i = 0; i < 100; i++) {
      limit.admit();
      limit.release(50, 1000);
    }
    expect(limit.limit).toBe(12);
  });
});
