import { discountOf, discountFor, labelOf } from './discount';
import { type CodeFacts, type CouponFacts, type ValidationInput, validatePromotionCode } from './validate';

const now = new Date('2026-03-01T00:00:00.000Z');
const code: CodeFacts = {
  code: 'SPRING20',
  active: true,
  valid_from: null,
  valid_until: null,
  max_redemptions: null,
  max_redemptions_per_customer: 1,
  minimum_amount: null,
  customer_eligibility: 'ALL',
  restricted_to_customer_id: null,
  current_redemptions: 0,
  held_redemptions: 0,
};
const coupon: CouponFacts = {
  name: 'Spring',
  discount_type: 'PERCENTAGE',
  discount_amount: 20,
  duration: 'once',
  duration_in_months: null,
  applies_to_all_products: true,
  product_ids: [],
  bonus_trial_days: 7,
  bonus_months: 1,
  active: true,
};

/** given a code, a coupon and a customer / when validated / then a result. */
function given(c: Partial<CodeFacts> = {}, cp: Partial<CouponFacts> = {}, rest: Partial<ValidationInput> = {}) {
  const base: ValidationInput = {
    now,
    masked: false,
    request: { customerId: 'cus_1', externalId: null, email: null, productId: null },
    promotionCode: { ...code, ...c },
    coupon: { ...coupon, ...cp },
    customer: { redemptions: 0, hasCompletedOrders: false },
    products: [],
    ...rest,
  };
  return {
    when: (request: Partial<ValidationInput['request']> = {}) => ({
      then: () => validatePromotionCode({ ...base, request: { ...base.request, ...request } }),
    }),
  };
}
const errorOf = (input: ReturnType<typeof given>, request: Partial<ValidationInput['request']> = {}) =>
  input.when(request).then().error_code;

describe('validatePromotionCode', () => {
  describe('when everything holds', () => {
    it('is valid with the coupon, code and discount summaries', () => {
      expect(
        given({ max_redemptions: 5, current_redemptions: 2, held_redemptions: 3 }).when({ amount: 1000 }).then(),
      ).toEqual({
        valid: true,
        applies_to_all_products: true,
        discount: {
          type: 'PERCENTAGE',
          amount: 200,
          discounted_amount: 800,
          label: '20% off',
          bonus_trial_days: 7,
          bonus_months: 1,
        },
        coupon: {
          name: 'Spring',
          discount_type: 'PERCENTAGE',
          discount_amount: 20,
          duration: 'once',
          applies_to_all_products: true,
        },
        promotion_code: { code: 'SPRING20', valid_until: null, max_redemptions: 5, current_redemptions: 2 },
      });
    });
    it('leaves the discount amounts out without an amount', () => {
      expect(given().when().then().discount).toEqual({
        type: 'PERCENTAGE',
        label: '20% off',
        bonus_trial_days: 7,
        bonus_months: 1,
      });
    });
  });

  describe('each error code on its condition', () => {
    it('NOT_FOUND without a code or its coupon', () => {
      expect(errorOf(given({}, {}, { promotionCode: undefined }))).toBe('PROMO_CODE_NOT_FOUND');
      expect(errorOf(given({}, {}, { coupon: undefined }))).toBe('PROMO_CODE_NOT_FOUND');
    });
    it('INACTIVE when the code or the coupon is inactive', () => {
      expect(errorOf(given({ active: false }))).toBe('PROMO_CODE_INACTIVE');
      expect(errorOf(given({}, { active: false }))).toBe('PROMO_CODE_INACTIVE');
    });
    it('NOT_STARTED before valid_from, valid at valid_from', () => {
      expect(errorOf(given({ valid_from: '2026-03-01T00:00:00.001Z' }))).toBe('PROMO_CODE_NOT_STARTED');
      expect(given({ valid_from: '2026-03-01T00:00:00.000Z' }).when().then().valid).toBe(true);
    });
    it('EXPIRED at and after valid_until, valid just before', () => {
      expect(errorOf(given({ valid_until: '2026-03-01T00:00:00.000Z' }))).toBe('PROMO_CODE_EXPIRED');
      expect(given({ valid_until: '2026-03-01T00:00:00.001Z' }).when().then().valid).toBe(true);
    });
    it('EXHAUSTED when reserved and active redemptions reach max_redemptions', () => {
      expect(errorOf(given({ max_redemptions: 3, held_redemptions: 3 }))).toBe('PROMO_CODE_EXHAUSTED');
      expect(given({ max_redemptions: 3, held_redemptions: 2 }).when().then().valid).toBe(true);
    });
    it('RESTRICTED unless the customer id or external id is the one named', () => {
      const restricted = given({ restricted_to_customer_id: 'cus_vip' });
      expect(errorOf(restricted)).toBe('PROMO_CODE_RESTRICTED');
      expect(errorOf(restricted, { customerId: null })).toBe('PROMO_CODE_RESTRICTED');
      expect(restricted.when({ customerId: 'cus_vip' }).then().valid).toBe(true);
      expect(restricted.when({ customerId: null, externalId: 'cus_vip' }).then().valid).toBe(true);
    });
    it('NEW_CUSTOMERS_ONLY for a customer with completed orders; anonymous callers count as new', () => {
      const orders = { customer: { redemptions: 0, hasCompletedOrders: true } };
      expect(errorOf(given({ customer_eligibility: 'NEW_CUSTOMERS' }, {}, orders))).toBe(
        'PROMO_CODE_NEW_CUSTOMERS_ONLY',
      );
      expect(given({ customer_eligibility: 'NEW_CUSTOMERS' }).when({ customerId: null }).then().valid).toBe(true);
    });
    it('EXISTING_CUSTOMERS_ONLY without completed orders', () => {
      expect(errorOf(given({ customer_eligibility: 'EXISTING_CUSTOMERS' }))).toBe('PROMO_CODE_EXISTING_CUSTOMERS_ONLY');
      const orders = { customer: { redemptions: 0, hasCompletedOrders: true } };
      expect(given({ customer_eligibility: 'EXISTING_CUSTOMERS' }, {}, orders).when().then().valid).toBe(true);
    });
    it('ALREADY_USED when the customer holds max_redemptions_per_customer; not checked anonymously', () => {
      const used = { customer: { redemptions: 2, hasCompletedOrders: false } };
      expect(errorOf(given({ max_redemptions_per_customer: 2 }, {}, used))).toBe('PROMO_CODE_ALREADY_USED');
      expect(given({ max_redemptions_per_customer: 3 }, {}, used).when().then().valid).toBe(true);
      expect(given({}, {}, used).when({ customerId: null }).then().valid).toBe(true);
    });
    it('PRODUCT_MISMATCH for a product the restricted coupon does not list', () => {
      const restricted = given({}, { applies_to_all_products: false, product_ids: ['prod_a'] });
      expect(errorOf(restricted, { productId: 'prod_b' })).toBe('PROMO_CODE_PRODUCT_MISMATCH');
      expect(restricted.when({ productId: 'prod_a' }).then().valid).toBe(true);
      expect(given().when({ productId: 'prod_b' }).then().valid).toBe(true);
    });
    it('MINIMUM_NOT_MET below minimum_amount; the minimum itself passes; no amount is not checked', () => {
      expect(errorOf(given({ minimum_amount: 500 }), { amount: 499 })).toBe('PROMO_CODE_MINIMUM_NOT_MET');
      expect(given({ minimum_amount: 500 }).when({ amount: 500 }).then().valid).toBe(true);
      expect(given({ minimum_amount: 500 }).when().then().valid).toBe(true);
    });
  });

  describe('precedence', () => {
    it('reports the first failure in the documented order', () => {
      const everything = given(
        {
          active: false,
          valid_from: '2099-01-01T00:00:00Z',
          valid_until: '2020-01-01T00:00:00Z',
          max_redemptions: 1,
          held_redemptions: 1,
          restricted_to_customer_id: 'cus_vip',
          customer_eligibility: 'EXISTING_CUSTOMERS',
          minimum_amount: 100,
        },
        { applies_to_all_products: false, product_ids: ['prod_a'] },
        { customer: { redemptions: 1, hasCompletedOrders: false } },
      );
      const order = [
        ['PROMO_CODE_INACTIVE', { active: true }],
        ['PROMO_CODE_NOT_STARTED', { valid_from: null }],
        ['PROMO_CODE_EXPIRED', { valid_until: null }],
        ['PROMO_CODE_EXHAUSTED', { max_redemptions: null }],
        ['PROMO_CODE_RESTRICTED', { restricted_to_customer_id: null }],
        ['PROMO_CODE_EXISTING_CUSTOMERS_ONLY', { customer_eligibility: 'ALL' }],
        ['PROMO_CODE_ALREADY_USED', { max_redemptions_per_customer: 2 }],
      ] as const;
      let fields: Partial<CodeFacts> = {};
      const request = { productId: 'prod_b', amount: 50 };
      for (const [expected, fix] of order) {
        const input = given(
          {
            active: false,
            valid_from: '2099-01-01T00:00:00Z',
            valid_until: '2020-01-01T00:00:00Z',
            max_redemptions: 1,
            held_redemptions: 1,
            restricted_to_customer_id: 'cus_vip',
            customer_eligibility: 'EXISTING_CUSTOMERS',
            minimum_amount: 100,
            ...fields,
          },
          { applies_to_all_products: false, product_ids: ['prod_a'] },
          { customer: { redemptions: 1, hasCompletedOrders: false } },
        );
        expect(errorOf(input, request)).toBe(expected);
        fields = { ...fields, ...fix };
      }
      expect(errorOf(everything, request)).toBe('PROMO_CODE_INACTIVE');
    });
    it('checks the product before the minimum', () => {
      const input = given({ minimum_amount: 100 }, { applies_to_all_products: false, product_ids: ['prod_a'] });
      expect(errorOf(input, { productId: 'prod_b', amount: 50 })).toBe('PROMO_CODE_PRODUCT_MISMATCH');
    });
  });

  describe('with a Publishable Key', () => {
    it('reports every failure as PROMO_CODE_INVALID with one generic message', () => {
      const masked = { masked: true };
      for (const input of [
        given({}, {}, { ...masked, promotionCode: undefined }),
        given({ active: false }, {}, masked),
        given({ valid_until: '2020-01-01T00:00:00Z' }, {}, masked),
        given({ max_redemptions: 1, held_redemptions: 1 }, {}, masked),
      ]) {
        expect(input.when().then()).toEqual({
          valid: false,
          error_code: 'PROMO_CODE_INVALID',
          error_message: 'This promotion code is not valid',
        });
      }
    });
    it('keeps ALREADY_USED', () => {
      const input = given({}, {}, { masked: true, customer: { redemptions: 1, hasCompletedOrders: false } });
      expect(errorOf(input)).toBe('PROMO_CODE_ALREADY_USED');
    });
  });

  describe('applicable products', () => {
    it('lists the restricted coupon products the replica knows, priced after the discount', () => {
      const input = given(
        {},
        { applies_to_all_products: false, product_ids: ['prod_a', 'prod_gone', 'prod_b'] },
        {
          products: [
            { id: 'prod_b', name: 'B', price: 999, interval: null, interval_count: 1 },
            { id: 'prod_a', name: 'A', price: 299, interval: 'month', interval_count: 1 },
          ],
        },
      );
      expect(input.when().then().applicable_products).toEqual([
        { id: 'prod_a', name: 'A', price: 299, price_after_discount: 240, interval: 'month', interval_count: 1 },
        { id: 'prod_b', name: 'B', price: 999, price_after_discount: 800, interval: null, interval_count: 1 },
      ]);
    });
    it('is absent when the coupon applies to every product', () => {
      expect(given().when().then().applicable_products).toBeUndefined();
    });
  });
});

describe('discount rounding: floor the discount, integer TWD, never negative, never above the amount', () => {
  const pct = (p: number) => ({
    discount_type: 'PERCENTAGE' as const,
    discount_amount: p,
    bonus_trial_days: 0,
    bonus_months: 0,
  });
  const fixed = (f: number) => ({ ...pct(0), discount_type: 'FIXED_AMOUNT' as const, discount_amount: f });
  const first = (x: number) => ({ ...pct(0), discount_type: 'FIRST_PERIOD_PRICE' as const, discount_amount: x });

  it.each([
    [299, 20, 59], // 59.8 -> 59: the customer pays 240
    [1, 1, 0], // 0.01 -> 0
    [99, 1, 0], // 0.99 -> 0
    [100, 1, 1],
    [199, 50, 99], // 99.5 -> 99
    [0, 50, 0],
    [299, 100, 299], // 100% is the whole amount
    [Number.MAX_SAFE_INTEGER / 100, 100, Number.MAX_SAFE_INTEGER / 100],
  ])('PERCENTAGE: %d at %d%% -> %d off', (amount, p, off) => {
    expect(discountOf(pct(p), Math.floor(amount))).toBe(Math.floor(off));
  });

  it.each([
    [299, 100, 100],
    [100, 100, 100],
    [99, 100, 99], // never above the amount
    [0, 100, 0],
  ])('FIXED_AMOUNT: %d less %d -> %d off', (amount, f, off) => expect(discountOf(fixed(f), amount)).toBe(off));

  it.each([
    [299, 1, 298],
    [299, 0, 299], // free first period
    [299, 299, 0],
    [100, 299, 0], // never negative: the price is already below the first-period price
  ])('FIRST_PERIOD_PRICE: %d to %d -> %d off', (amount, x, off) => expect(discountOf(first(x), amount)).toBe(off));

  it('labels each type', () => {
    expect(labelOf(pct(20))).toBe('20% off');
    expect(labelOf(fixed(1000))).toBe('NT$1,000 off');
    expect(labelOf(first(1))).toBe('First period NT$1');
  });

  it('answers the discount and the amount after it', () => {
    expect(discountFor(pct(20), 299)).toMatchObject({ amount: 59, discounted_amount: 240 });
  });
});
