import { agrees, checkedAnswerOf } from './renewal-charges';

describe('which renewal answers the processor is asked about later', () => {
  it('given a charge that succeeded, asks whether the processor shows it paid', () => {
    const card = { id: 'pm_payuni_1', brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2030 };
    const succeeded = { status: 'succeeded', payment_method: card };
    expect(checkedAnswerOf(succeeded)).toBe('succeeded');
  });

  it('given a transfer given up at its deadline, asks whether the buyer paid it anyway', () => {
    const late = { status: 'declined', code: 'payment_deadline_passed', message: 'late' };
    expect(checkedAnswerOf(late)).toBe('declined');
  });

  it('given a decline that took nothing, or a renewal still waiting, asks nothing', () => {
    for (const code of ['card_declined', 'code_not_issued', 'attempt_released', 'processor_unavailable']) {
      const declined = { status: 'declined', code, message: '' };
      expect(checkedAnswerOf(declined)).toBeNull();
    }
    expect(checkedAnswerOf({ status: 'pending' })).toBeNull();
  });
});

describe('whether the processor agrees with the answer billing was given', () => {
  const paid = { answer: 'succeeded' as const, amount: 299 };
  const givenUp = { answer: 'declined' as const, amount: 299 };

  it('given paid here, agrees only when the processor shows it paid for the same amount', () => {
    expect(agrees(paid, { paid: true, amount: 299 })).toBe(true);
    expect(agrees(paid, { paid: true, amount: 298 })).toBe(false);
    expect(agrees(paid, { paid: false, amount: 0 })).toBe(false);
  });

  it('given a transfer given up here, agrees only when the processor took nothing', () => {
    expect(agrees(givenUp, { paid: false, amount: 0 })).toBe(true);
    expect(agrees(givenUp, { paid: true, amount: 299 })).toBe(false);
    expect(agrees(givenUp, { paid: true, amount: 100 })).toBe(false);
  });
});
