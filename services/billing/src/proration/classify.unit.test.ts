import {
  DEFAULT_PRORATION_POLICY,
  type ProrationPolicy,
  executionModeOf,
  periodChangeIsUpward,
  switchTypeOf,
  treatmentOf,
} from './classify';

const plan = (price: number, interval: 'day' | 'week' | 'month' | 'year' = 'month', interval_count = 1) => ({
  price,
  interval,
  interval_count,
});

describe('switch type', () => {
  it.each([
    [plan(299), plan(599), 'UPGRADE'],
    [plan(599), plan(299), 'DOWNGRADE'],
    [plan(299), plan(299), 'CROSSGRADE'],
    [plan(2990, 'year'), plan(3990, 'year'), 'UPGRADE'],
    [plan(299), plan(2990, 'year'), 'PERIOD_CHANGE'],
    [plan(2990, 'year'), plan(299), 'PERIOD_CHANGE'],
    [plan(299), plan(897, 'month', 3), 'PERIOD_CHANGE'],
    [plan(100, 'week'), plan(433)],
  ])('%j to %j', (current, target, expected = 'PERIOD_CHANGE') => {
    expect(switchTypeOf(current, target)).toBe(expected);
  });
});

describe('period changes by full-period price', () => {
  it('month to year costs more per period: upward; year to month: not', () => {
    expect(periodChangeIsUpward(plan(299), plan(2990, 'year'))).toBe(true);
    expect(periodChangeIsUpward(plan(2990, 'year'), plan(299))).toBe(false);
    expect(periodChangeIsUpward(plan(299), plan(299, 'year'))).toBe(false);
  });
});

describe('treatment and execution mode', () => {
  const cases: Array<[string, ReturnType<typeof plan>, ReturnType<typeof plan>, Partial<ProrationPolicy>, string]> = [
    ['upgrade', plan(299), plan(599), {}, 'prorate'],
    ['upgrade billed at next renewal', plan(299), plan(599), { upgrade: 'bill_at_next_renewal' }, 'defer'],
    ['downgrade', plan(599), plan(299), {}, 'schedule'],
    ['downgrade now with credit', plan(599), plan(299), { downgrade: 'now_with_credit' }, 'prorate'],
    ['crossgrade', plan(299), plan(299), {}, 'swap'],
    ['month to year', plan(299), plan(2990, 'year'), {}, 'prorate'],
    ['year to month', plan(2990, 'year'), plan(299), {}, 'schedule'],
    ['year to month, policy aside', plan(2990, 'year'), plan(299), { downgrade: 'now_with_credit' }, 'schedule'],
  ];
  it.each(cases)('%s', (_name, current, target, policy, expected) => {
    const type = switchTypeOf(current, target);
    const treatment = treatmentOf({
      type,
      current,
      target,
      inTrial: false,
      policy: { ...DEFAULT_PRORATION_POLICY, ...policy },
    });
    expect(treatment).toBe(expected);
    expect(executionModeOf(treatment)).toBe(expected === 'schedule' ? 'scheduled' : 'immediate');
  });

  it('a trial switches now, with nothing charged, whatever the type', () => {
    for (const [current, target] of [
      [plan(299), plan(599)],
      [plan(599), plan(299)],
      [plan(2990, 'year'), plan(299)],
    ] as const) {
      const type = switchTypeOf(current, target);
      expect(treatmentOf({ type, current, target, inTrial: true, policy: DEFAULT_PRORATION_POLICY })).toBe('swap');
    }
  });

  it('proration_behavior none changes immediate switches now without proration; scheduled ones stay scheduled', () => {
    const up = treatmentOf({
      type: 'UPGRADE',
      current: plan(299),
      target: plan(599),
      inTrial: false,
      policy: DEFAULT_PRORATION_POLICY,
      prorationBehavior: 'none',
    });
    expect(up).toBe('swap');
    const down = treatmentOf({
      type: 'DOWNGRADE',
      current: plan(599),
      target: plan(299),
      inTrial: false,
      policy: DEFAULT_PRORATION_POLICY,
      prorationBehavior: 'none',
    });
    expect(down).toBe('schedule');
  });
});
