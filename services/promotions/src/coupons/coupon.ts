import type { CouponCreatedData, CouponTerms, CouponUpdatedData, Environment } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const couponStream = (couponId: string) => `coupon-${couponId}`;

export type CouponCreated = { type: 'CouponCreated'; data: CouponCreatedData };
export type CouponUpdated = { type: 'CouponUpdated'; data: CouponUpdatedData };
export type CouponEvent = CouponCreated | CouponUpdated;

export const couponEvents = streamEvents<CouponEvent>({ CouponCreated: true, CouponUpdated: true });

export type Coupon = CouponTerms & {
  id: string;
  organization: string;
  environment: Environment;
  created_at: string;
  updated_at: string;
};

export type CouponState = { status: 'Empty' } | { status: 'Existing'; coupon: Coupon };

export const initialState = (): CouponState => ({ status: 'Empty' });

export function evolve(state: CouponState, event: CouponEvent): CouponState {
  switch (event.type) {
    case 'CouponCreated': {
      const { coupon_id, ...coupon } = event.data;
      return { status: 'Existing', coupon: { id: coupon_id, ...coupon, updated_at: coupon.created_at } };
    }
    case 'CouponUpdated':
      if (state.status === 'Empty') return state;
      return {
        status: 'Existing',
        coupon: { ...state.coupon, ...event.data.changes, updated_at: event.data.updated_at },
      };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}
