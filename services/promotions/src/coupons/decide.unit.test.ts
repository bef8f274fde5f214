import { ApiError, type CouponTerms } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { couponAggregate } from './aggregate';
import type { CouponEvent } from './coupon';
import type { CreateCoupon, UpdateCoupon } from './decide';

const spec = deciderSpec(couponAggregate);
const at = new Date('2026-01-01T00:00:00.000Z');
const later = new Date('2026-01-02T00:00:00.000Z');
const terms: CouponTerms = {
  name: 'Spring',
  discount_type: 'PERCENTAGE',
  discount_amount: 20,
  duration: 'once',
  duration_in_months: null,
  applies_to_all_products: true,
  product_ids: [],
  bonus_trial_days: 0,
  bonus_months: 0,
  active: true,
  metadata: null,
};
const tenant = { couponId: 'cpn_1', organization: 'org_1', environment: 'SANDBOX' as const };
const create = (fields: Partial<CouponTerms> = {}): CreateCoupon => ({
  type: 'CreateCoupon',
  data: { ...tenant, terms: { ...terms, ...fields }, now: at },
});
const update = (changes: UpdateCoupon['data']['changes'], who: Partial<typeof tenant> = {}): UpdateCoupon => ({
  type: 'UpdateCoupon',
  data: { ...tenant, ...who, changes, now: later },
});
const created: CouponEvent = {
  type: 'CouponCreated',
  data: { coupon_id: 'cpn_1', organization: 'org_1', environment: 'SANDBOX', ...terms, created_at: at.toISOString() },
};

describe('Coupon', () => {
  describe('when new', () => {
    it('is created with its terms', () => spec.given([]).when(create()).then([created]));
    it.each<[string, Partial<CouponTerms>]>([
      ['a percentage above 100', { discount_amount: 101 }],
      ['a fixed amount of 0', { discount_type: 'FIXED_AMOUNT', discount_amount: 0 }],
      ['repeating without months', { duration: 'repeating' }],
      ['restricted without products', { applies_to_all_products: false }],
    ])('rejects %s', (_name, fields) => spec.given([]).when(create(fields)).thenThrows(ApiError));
    it('cannot be updated', () =>
      spec
        .given([])
        .when(update({ name: 'x' }))
        .thenThrows('No such coupon'));
  });

  describe('when it exists', () => {
    it('cannot be created again', () => spec.given([created]).when(create()).thenThrows('already exists'));
    it('records only the fields that change', () =>
      spec
        .given([created])
        .when(update({ name: 'Spring', active: false, metadata: { a: 'b' } }))
        .then([
          {
            type: 'CouponUpdated',
            data: {
              coupon_id: 'cpn_1',
              changes: { active: false, metadata: { a: 'b' } },
              updated_at: later.toISOString(),
            },
          },
        ]));
    it('records nothing for no change', () =>
      spec
        .given([created])
        .when(update({ name: 'Spring' }))
        .then([]));
    it('is absent to another organization or environment', () => {
      spec
        .given([created])
        .when(update({ name: 'x' }, { organization: 'org_2' }))
        .thenThrows('No such coupon');
      spec
        .given([created])
        .when(update({ name: 'x' }, { environment: 'PRODUCTION' as never }))
        .thenThrows('No such coupon');
    });
  });
});
