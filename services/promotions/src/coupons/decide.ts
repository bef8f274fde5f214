import {
  CouponTerms,
  type Environment,
  type UpdateCouponBody,
  checkCouponRules,
  conflict,
  detailsFromZodIssues,
  notFound,
  validationError,
} from '@billing/contracts';
import type { CouponEvent, CouponState } from './coupon';

export type CreateCoupon = {
  type: 'CreateCoupon';
  data: { couponId: string; organization: string; environment: Environment; terms: CouponTerms; now: Date };
};

export type UpdateCoupon = {
  type: 'UpdateCoupon';
  data: { couponId: string; organization: string; environment: Environment; changes: UpdateCouponBody; now: Date };
};

export type CouponCommand = CreateCoupon | UpdateCoupon;

export function decide(command: CouponCommand, state: CouponState): CouponEvent[] {
  switch (command.type) {
    case 'CreateCoupon':
      return create(command, state);
    case 'UpdateCoupon':
      return update(command, state);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

const CheckedTerms = CouponTerms.superRefine(checkCouponRules);

function create({ data }: CreateCoupon, state: CouponState): CouponEvent[] {
  if (state.status !== 'Empty') throw conflict(`Coupon ${data.couponId} already exists`);
  const parsed = CheckedTerms.safeParse(data.terms);
  if (!parsed.success) throw validationError(detailsFromZodIssues(parsed.error.issues));
  return [
    {
      type: 'CouponCreated',
      data: {
        coupon_id: data.couponId,
        organization: data.organization,
        environment: data.environment,
        ...parsed.data,
        created_at: data.now.toISOString(),
      },
    },
  ];
}

function update({ data }: UpdateCoupon, state: CouponState): CouponEvent[] {
  const { coupon } = existing(state, data);
  const changes: UpdateCouponBody = {};
  if (data.changes.name !== undefined && data.changes.name !== coupon.name) changes.name = data.changes.name;
  if (data.changes.active !== undefined && data.changes.active !== coupon.active) changes.active = data.changes.active;
  if (
    data.changes.metadata !== undefined &&
    JSON.stringify(data.changes.metadata) !== JSON.stringify(coupon.metadata)
  ) {
    changes.metadata = data.changes.metadata;
  }
  if (Object.keys(changes).length === 0) return [];
  return [{ type: 'CouponUpdated', data: { coupon_id: data.couponId, changes, updated_at: data.now.toISOString() } }];
}

/** Another organization's or environment's coupon is absent to the caller. */
function existing(state: CouponState, tenant: { couponId: string; organization: string; environment: Environment }) {
  if (
    state.status === 'Empty' ||
    state.coupon.organization !== tenant.organization ||
    state.coupon.environment !== tenant.environment
  ) {
    throw notFound(`No such coupon: ${tenant.couponId}`);
  }
  return state;
}
