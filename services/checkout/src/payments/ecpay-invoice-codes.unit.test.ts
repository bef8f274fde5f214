import { codeExpiryOf, ecpayCodeMethodOf, isEcpayCodeMethod } from './ecpay-invoice-codes';

const MINUTE = 60_000;
const DAY = 1_440 * MINUTE;

describe('codeExpiryOf', () => {
  it('given three days left, keeps an ATM account three days and a store code 4,320 minutes', () => {
    expect(codeExpiryOf(3 * DAY)).toEqual({ atmExpireDays: 3, cvsExpireMinutes: 4_320 });
  });

  it('given a part of a day left, rounds an ATM account up to whole days and a store code down to the minute', () => {
    expect(codeExpiryOf(3 * DAY - 90_000)).toEqual({ atmExpireDays: 3, cvsExpireMinutes: 4_318 });
    expect(codeExpiryOf(5 * MINUTE + 59_999)).toEqual({ atmExpireDays: 1, cvsExpireMinutes: 5 });
  });

  it("given less than a minute, or more than ECPay keeps, stays within ECPay's limits (1-60 days, 1-43,200 minutes)", () => {
    expect(codeExpiryOf(10_000)).toEqual({ atmExpireDays: 1, cvsExpireMinutes: 1 });
    expect(codeExpiryOf(90 * DAY)).toEqual({ atmExpireDays: 60, cvsExpireMinutes: 43_200 });
  });
});

describe('the payment method of a customer who pays by transfer through ECPay', () => {
  it("given ECPay's PaymentType prefix, names the transfer; a card is none", () => {
    expect(ecpayCodeMethodOf('ATM')).toBe('atm');
    expect(ecpayCodeMethodOf('CVS')).toBe('cvs');
    expect(ecpayCodeMethodOf('Credit')).toBeNull();
    expect(isEcpayCodeMethod('pm_code_ecpay_atm')).toBe(true);
    expect(isEcpayCodeMethod('pm_code_payuni_atm')).toBe(false);
  });
});
