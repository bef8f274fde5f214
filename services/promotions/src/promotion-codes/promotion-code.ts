import type {
  CustomerEligibility,
  Environment,
  PromotionCodeCreatedData,
  PromotionCodeRedeemedData,
  PromotionCodeUpdatedData,
  RedemptionAssignedData,
  RedemptionReleasedData,
  RedemptionReservedData,
  RedemptionVoidedData,
} from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const promotionCodeStream = (id: string) => `promotion_code-${id}`;

export type PromotionCodeCreated = { type: 'PromotionCodeCreated'; data: PromotionCodeCreatedData };
export type PromotionCodeUpdated = { type: 'PromotionCodeUpdated'; data: PromotionCodeUpdatedData };
export type RedemptionReserved = { type: 'RedemptionReserved'; data: RedemptionReservedData };
export type RedemptionAssigned = { type: 'RedemptionAssigned'; data: RedemptionAssignedData };
export type PromotionCodeRedeemed = { type: 'PromotionCodeRedeemed'; data: PromotionCodeRedeemedData };
export type RedemptionReleased = { type: 'RedemptionReleased'; data: RedemptionReleasedData };
export type RedemptionVoided = { type: 'RedemptionVoided'; data: RedemptionVoidedData };

export type PromotionCodeEvent =
  | PromotionCodeCreated
  | PromotionCodeUpdated
  | RedemptionReserved
  | RedemptionAssigned
  | PromotionCodeRedeemed
  | RedemptionReleased
  | RedemptionVoided;

export const promotionCodeEvents = streamEvents<PromotionCodeEvent>({
  PromotionCodeCreated: true,
  PromotionCodeUpdated: true,
  RedemptionReserved: true,
  RedemptionAssigned: true,
  PromotionCodeRedeemed: true,
  RedemptionReleased: true,
  RedemptionVoided: true,
});

/** The settings of a promotion code; `code` and `coupon_id` never change. */
export interface PromotionCode {
  id: string;
  organization: string;
  environment: Environment;
  code: string;
  coupon_id: string;
  valid_from: string | null;
  valid_until: string | null;
  max_redemptions: number | null;
  max_redemptions_per_customer: number;
  minimum_amount: number | null;
  customer_eligibility: CustomerEligibility;
  restricted_to_customer_id: string | null;
  active: boolean;
  metadata: Record<string, string> | null;
  created_at: string;
  updated_at: string;
}

/**
 * RESERVED: held for a checkout session, counted against the caps, not yet listed.
 * ACTIVE: confirmed by a completed session. RELEASED: the session ended unpaid; no longer
 * counted. VOIDED: the order was refunded; listed, no longer counted.
 */
export type RedemptionStatus = 'RESERVED' | 'ACTIVE' | 'RELEASED' | 'VOIDED';

export interface RedemptionEntry {
  id: string;
  status: RedemptionStatus;
  checkout_session_id: string;
  customer_id: string | null;
  external_id: string | null;
  /** Lowercased; null when the buyer was not named by email. */
  email: string | null;
  discount_amount: number;
}

export type PromotionCodeState =
  { status: 'Empty' } | { status: 'Existing'; code: PromotionCode; redemptions: Record<string, RedemptionEntry> };

/**
 * Version of this module's `evolve` and state shape for snapshots (docs/decisions/0010-snapshots.md):
 * bump it whenever either changes, so snapshots folded by the old `evolve` are ignored. The state
 * must stay plain JSON (strings, finite numbers, booleans, null, arrays, plain objects).
 */
export const PROMOTION_CODE_SNAPSHOT_VERSION = 1;

export const initialState = (): PromotionCodeState => ({ status: 'Empty' });

/** Redemptions that count against `max_redemptions` and `max_redemptions_per_customer`. */
export const holdsCap = (r: RedemptionEntry) => r.status === 'RESERVED' || r.status === 'ACTIVE';

export function evolve(state: PromotionCodeState, event: PromotionCodeEvent): PromotionCodeState {
  if (event.type === 'PromotionCodeCreated') {
    const { promotion_code_id, ...code } = event.data;
    return {
      status: 'Existing',
      code: { id: promotion_code_id, ...code, updated_at: code.created_at },
      redemptions: {},
    };
  }
  if (state.status === 'Empty') return state;
  const withRedemption = (id: string, change: Partial<RedemptionEntry>): PromotionCodeState => {
    const current = state.redemptions[id];
    if (!current) return state;
    return { ...state, redemptions: { ...state.redemptions, [id]: { ...current, ...change } } };
  };
  switch (event.type) {
    case 'PromotionCodeUpdated':
      return { ...state, code: { ...state.code, ...event.data.changes, updated_at: event.data.updated_at } };
    case 'RedemptionReserved': {
      const d = event.data;
      const entry: RedemptionEntry = {
        id: d.redemption_id,
        status: 'RESERVED',
        checkout_session_id: d.checkout_session_id,
        customer_id: d.customer_id,
        external_id: d.external_id,
        email: d.email ?? null,
        discount_amount: d.discount_amount,
      };
      return { ...state, redemptions: { ...state.redemptions, [d.redemption_id]: entry } };
    }
    case 'RedemptionAssigned': {
      const { customer_id, external_id, email } = event.data;
      return withRedemption(event.data.redemption_id, { customer_id, external_id, email });
    }
    case 'PromotionCodeRedeemed':
      return withRedemption(event.data.redemption_id, {
        status: 'ACTIVE',
        customer_id: event.data.customer_id,
        external_id: event.data.external_id,
      });
    case 'RedemptionReleased':
      return withRedemption(event.data.redemption_id, { status: 'RELEASED' });
    case 'RedemptionVoided':
      return withRedemption(event.data.redemption_id, { status: 'VOIDED' });
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}
