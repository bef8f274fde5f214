import {
  type CreatePromotionCodeBody,
  type Environment,
  type UpdatePromotionCodeBody,
  conflict,
  notFound,
  validationError,
} from '@billing/contracts';
import { promoCodeError } from '../validation/errors';
import {
  type PromotionCode,
  type PromotionCodeEvent,
  type PromotionCodeState,
  type RedemptionEntry,
  holdsCap,
} from './promotion-code';

interface Target {
  promotionCodeId: string;
  organization: string;
  environment: Environment;
  now: Date;
}

export type CreatePromotionCode = {
  type: 'CreatePromotionCode';
  data: Target & { fields: CreatePromotionCodeBody };
};
export type UpdatePromotionCode = { type: 'UpdatePromotionCode'; data: Target & { changes: UpdatePromotionCodeBody } };
export type ReserveRedemption = {
  type: 'ReserveRedemption';
  data: Target & {
    redemptionId: string;
    checkoutSessionId: string;
    customerId: string | null;
    externalId: string | null;
    email: string | null;
    discountAmount: number;
  };
};
/** Checkout names the customer paying for a reserved redemption, before the charge. */
export type AssignRedemption = {
  type: 'AssignRedemption';
  data: Target & { redemptionId: string; customerId: string; externalId: string | null; email: string | null };
};
export type ConfirmRedemption = {
  type: 'ConfirmRedemption';
  data: Target & { redemptionId: string; orderId: string | null; customerId: string | null; externalId: string | null };
};
export type ReleaseRedemption = { type: 'ReleaseRedemption'; data: Target & { redemptionId: string } };
export type VoidRedemption = { type: 'VoidRedemption'; data: Target & { redemptionId: string } };

export type PromotionCodeCommand =
  | CreatePromotionCode
  | UpdatePromotionCode
  | ReserveRedemption
  | AssignRedemption
  | ConfirmRedemption
  | ReleaseRedemption
  | VoidRedemption;

export function decide(command: PromotionCodeCommand, state: PromotionCodeState): PromotionCodeEvent[] {
  switch (command.type) {
    case 'CreatePromotionCode':
      return create(command, state);
    case 'UpdatePromotionCode':
      return update(command, state);
    case 'ReserveRedemption':
      return reserve(command, state);
    case 'AssignRedemption':
      return assign(command, state);
    case 'ConfirmRedemption':
      return confirm(command, state);
    case 'ReleaseRedemption':
      return release(command, state);
    case 'VoidRedemption':
      return voidRedemption(command, state);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

const utc = (value: string | null | undefined) => (value ? new Date(value).toISOString() : value);

function create({ data }: CreatePromotionCode, state: PromotionCodeState): PromotionCodeEvent[] {
  if (state.status !== 'Empty') throw conflict(`Promotion code ${data.promotionCodeId} already exists`);
  const f = data.fields;
  return [
    {
      type: 'PromotionCodeCreated',
      data: {
        promotion_code_id: data.promotionCodeId,
        organization: data.organization,
        environment: data.environment,
        ...f,
        valid_from: utc(f.valid_from) ?? null,
        valid_until: utc(f.valid_until) ?? null,
        created_at: data.now.toISOString(),
      },
    },
  ];
}

function update({ data }: UpdatePromotionCode, state: PromotionCodeState): PromotionCodeEvent[] {
  const { code } = existing(state, data);
  const requested: UpdatePromotionCodeBody = {
    ...data.changes,
    ...(data.changes.valid_from !== undefined ? { valid_from: utc(data.changes.valid_from) } : {}),
    ...(data.changes.valid_until !== undefined ? { valid_until: utc(data.changes.valid_until) } : {}),
  };
  const changes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(requested)) {
    if (value === undefined) continue;
    if (JSON.stringify(value) !== JSON.stringify(code[name as keyof PromotionCode])) changes[name] = value;
  }
  if (Object.keys(changes).length === 0) return [];
  // The window rule holds for the code as it would be, not for the request alone.
  const merged = { ...code, ...changes } as PromotionCode;
  if (merged.valid_from && merged.valid_until && Date.parse(merged.valid_until) <= Date.parse(merged.valid_from)) {
    throw validationError([
      { path: 'valid_until', message: 'valid_until must be later than valid_from', code: 'custom' },
    ]);
  }
  return [
    {
      type: 'PromotionCodeUpdated',
      data: { promotion_code_id: data.promotionCodeId, changes, updated_at: data.now.toISOString() },
    },
  ];
}

/** Whether a redemption belongs to the customer, named by customer id, external id or email. */
export function sameCustomer(
  r: Pick<RedemptionEntry, 'customer_id' | 'external_id' | 'email'>,
  who: CustomerRef,
): boolean {
  return (
    (who.customerId !== null && r.customer_id === who.customerId) ||
    (who.externalId !== null && r.external_id === who.externalId) ||
    (who.email !== null && r.email === who.email)
  );
}
/** The names one buyer goes by; `email` lowercased (`emailKey`). */
export interface CustomerRef {
  customerId: string | null;
  externalId: string | null;
  email: string | null;
}

/**
 * Holds a redemption for a checkout session. The caps are checked here, on the stream, so two
 * concurrent reservations cannot both take the last place: the second one's append conflicts,
 * it is decided again on the new state and gets EXHAUSTED. A repeated reservation for the same
 * session returns the one it holds.
 */
function reserve({ data }: ReserveRedemption, state: PromotionCodeState): PromotionCodeEvent[] {
  const { code, redemptions } = existing(state, data);
  const all = Object.values(redemptions);
  if (all.some((r) => r.checkout_session_id === data.checkoutSessionId && holdsCap(r))) return [];
  if (!code.active) throw promoCodeError('PROMO_CODE_INACTIVE');
  const held = all.filter(holdsCap);
  if (code.max_redemptions !== null && held.length >= code.max_redemptions)
    throw promoCodeError('PROMO_CODE_EXHAUSTED');
  const who = { customerId: data.customerId, externalId: data.externalId, email: data.email };
  if (held.filter((r) => sameCustomer(r, who)).length >= code.max_redemptions_per_customer) {
    throw promoCodeError('PROMO_CODE_ALREADY_USED');
  }
  return [
    {
      type: 'RedemptionReserved',
      data: {
        promotion_code_id: data.promotionCodeId,
        redemption_id: data.redemptionId,
        checkout_session_id: data.checkoutSessionId,
        customer_id: data.customerId,
        external_id: data.externalId,
        email: data.email,
        discount_amount: data.discountAmount,
        reserved_at: data.now.toISOString(),
      },
    },
  ];
}

/**
 * The buyer of a reserved redemption is known (checkout resolved them before charging). The
 * per-customer limit is checked again with every name of the customer, against the other
 * redemptions that hold the cap: two sessions opened under different names of one customer
 * cannot both pay with the code. Assigning the same customer again changes nothing.
 */
function assign({ data }: AssignRedemption, state: PromotionCodeState): PromotionCodeEvent[] {
  const { code, redemptions } = existing(state, data);
  const r = redemptions[data.redemptionId];
  if (!r) throw notFound(`No such redemption: ${data.redemptionId}`);
  if (r.status !== 'RESERVED') {
    throw promoCodeError('PROMO_CODE_INACTIVE', 'The promotion code is no longer held for this checkout');
  }
  const unchanged = r.customer_id === data.customerId && r.external_id === data.externalId && r.email === data.email;
  if (unchanged) return [];
  const who = { customerId: data.customerId, externalId: data.externalId, email: data.email };
  const others = Object.values(redemptions).filter((o) => o.id !== r.id && holdsCap(o) && sameCustomer(o, who));
  if (others.length >= code.max_redemptions_per_customer) throw promoCodeError('PROMO_CODE_ALREADY_USED');
  return [
    {
      type: 'RedemptionAssigned',
      data: {
        promotion_code_id: code.id,
        redemption_id: r.id,
        customer_id: data.customerId,
        external_id: data.externalId,
        email: data.email,
        assigned_at: data.now.toISOString(),
      },
    },
  ];
}

/**
 * The session was paid. A redemption released meanwhile (the session expired while the
 * payment was in flight) is confirmed too: the customer paid the discounted price.
 */
function confirm({ data }: ConfirmRedemption, state: PromotionCodeState): PromotionCodeEvent[] {
  const { code, redemptions } = existing(state, data);
  const r = redemptions[data.redemptionId];
  if (!r || (r.status !== 'RESERVED' && r.status !== 'RELEASED')) return [];
  return [
    {
      type: 'PromotionCodeRedeemed',
      data: {
        promotion_code_id: code.id,
        redemption_id: r.id,
        code: code.code,
        coupon_id: code.coupon_id,
        checkout_session_id: r.checkout_session_id,
        order_id: data.orderId,
        customer_id: data.customerId ?? r.customer_id,
        external_id: data.externalId ?? r.external_id,
        discount_amount: r.discount_amount,
        redeemed_at: data.now.toISOString(),
        object: {
          id: r.id,
          promotion_code_id: code.id,
          customer_id: data.customerId ?? r.customer_id,
          order_id: data.orderId,
          discount_amount: r.discount_amount,
          status: 'ACTIVE',
          redeemed_at: data.now.toISOString(),
        },
      },
    },
  ];
}

function release({ data }: ReleaseRedemption, state: PromotionCodeState): PromotionCodeEvent[] {
  const { redemptions } = existing(state, data);
  const r = redemptions[data.redemptionId];
  if (!r) throw notFound(`No such redemption: ${data.redemptionId}`);
  if (r.status !== 'RESERVED') return [];
  return [
    {
      type: 'RedemptionReleased',
      data: { promotion_code_id: data.promotionCodeId, redemption_id: r.id, released_at: data.now.toISOString() },
    },
  ];
}

function voidRedemption({ data }: VoidRedemption, state: PromotionCodeState): PromotionCodeEvent[] {
  const { redemptions } = existing(state, data);
  const r = redemptions[data.redemptionId];
  if (!r || !holdsCap(r)) return [];
  return [
    {
      type: 'RedemptionVoided',
      data: { promotion_code_id: data.promotionCodeId, redemption_id: r.id, voided_at: data.now.toISOString() },
    },
  ];
}

/** Another organization's or environment's code is absent to the caller. */
function existing(state: PromotionCodeState, target: Target) {
  if (
    state.status === 'Empty' ||
    state.code.organization !== target.organization ||
    state.code.environment !== target.environment
  ) {
    throw notFound(`No such promotion code: ${target.promotionCodeId}`);
  }
  return state;
}
