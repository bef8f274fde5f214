import { ApiFailure } from './client';

describe("an API failure's explanation next to a form", () => {
  it('adds each field problem after the message', () => {
    const failure = new ApiFailure(422, 'validation_error', 'Request validation failed', [
      { path: 'amount', message: 'Too small: expected number to be >=1' },
      { path: 'reason', message: 'Required' },
    ]);
    expect(failure.explanation).toBe(
      'Request validation failed (amount: Too small: expected number to be >=1; reason: Required)',
    );
  });

  it('says a problem once when its field says what the message says', () => {
    const message = 'The balance is 620 credits; 9999 cannot be taken';
    const failure = new ApiFailure(402, 'insufficient_credits', message, [{ path: 'amount', message }]);
    expect(failure.explanation).toBe(message);
  });
});
