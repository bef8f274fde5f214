import { modeFor, redirectUrlViolation, successRedirect } from './rules';

describe('redirect URLs', () => {
  it.each([
    ['https://shop.example/ok?id={CHECKOUT_SESSION_ID}', 'SANDBOX'],
    ['https://shop.example/ok', 'PRODUCTION'],
    ['http://localhost:3000/ok', 'SANDBOX'],
    ['http://127.0.0.1/ok', 'SANDBOX'],
  ] as const)('accepts %s in %s', (url, environment) => {
    expect(redirectUrlViolation('success_url', url, environment)).toBeNull();
  });
  it.each([
    ['http://shop.example/ok', 'SANDBOX'],
    ['http://localhost:3000/ok', 'PRODUCTION'],
    ['http://127.0.0.1/ok', 'PRODUCTION'],
    ['ftp://shop.example/ok', 'SANDBOX'],
    ['shop.example/ok', 'SANDBOX'],
    ['http://localhost.evil.example/ok', 'SANDBOX'],
  ] as const)('refuses %s in %s', (url, environment) => {
    expect(redirectUrlViolation('success_url', url, environment)).toMatchObject({
      path: 'success_url',
      code: 'invalid_url',
    });
  });
  it('fills the session id placeholder', () => {
    expect(successRedirect('https://a.example/{CHECKOUT_SESSION_ID}?s={CHECKOUT_SESSION_ID}', 'cs_1')).toBe(
      'https://a.example/cs_1?s=cs_1',
    );
  });
});

describe('mode', () => {
  it('is derived from the product type', () => {
    expect(modeFor('SUBSCRIPTION', undefined)).toBe('SUBSCRIPTION');
    for (const type of ['ONE_TIME', 'CREDITS', 'DONATION'] as const) expect(modeFor(type, undefined)).toBe('PAYMENT');
  });
  it('is checked against it: SETUP only for subscriptions', () => {
    expect(modeFor('SUBSCRIPTION', 'SETUP')).toBe('SETUP');
    expect(modeFor('SUBSCRIPTION', 'PAYMENT')).toMatchObject({ path: 'mode', code: 'mode_mismatch' });
    expect(modeFor('ONE_TIME', 'SUBSCRIPTION')).toMatchObject({ code: 'mode_mismatch' });
    expect(modeFor('ONE_TIME', 'SETUP')).toMatchObject({ code: 'mode_mismatch' });
  });
});
