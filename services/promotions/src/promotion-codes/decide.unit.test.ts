import { ApiError, type CreatePromotionCodeBody } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { promotionCodeAggregate } from './aggregate';
import type { PromotionCodeCommand } from './decide';
import type { PromotionCodeEvent } from './promotion-code';

const spec = deciderSpec(promotionCodeAggregate);
const at = new Date('2026-01-01T00:00:00.000Z');
const now = at.toISOString();
const target = { promotionCodeId: 'promo_1', organization: 'org_1', environment: 'SANDBOX' as const, now: at };
const fields: CreatePromotionCodeBody = {
  coupon_id: 'cpn_1',
  code: 'SPRING',
  valid_from: null,
  valid_until: null,
  max_redemptions: 2,
  max_redemptions_per_customer: 1,
  minimum_amount: null,
  customer_eligibility: 'ALL',
  restricted_to_customer_id: null,
  active: true,
  metadata: null,
};
const created: PromotionCodeEvent = {
  type: 'PromotionCodeCreated',
  data: { promotion_code_id: 'promo_1', organization: 'org_1', environment: 'SANDBOX', ...fields, created_at: now },
};
const reserve = (
  id: string,
  session: string,
  customerId: string | null = null,
  email: string | null = null,
): PromotionCodeCommand => ({
  type: 'ReserveRedemption',
  data: {
    ...target,
    redemptionId: id,
    checkoutSessionId: session,
    customerId,
    externalId: null,
    email,
    discountAmount: 10,
  },
});
const reserved = (
  id: string,
  session: string,
  customerId: string | null = null,
  email: string | null = null,
): PromotionCodeEvent => ({
  type: 'RedemptionReserved',
  data: {
    promotion_code_id: 'promo_1',
    redemption_id: id,
    checkout_session_id: session,
    customer_id: customerId,
    external_id: null,
    email,
    discount_amount: 10,
    reserved_at: now,
  },
});
const assign = (id: string, customerId: string, email: string | null, externalId: string | null = null) => ({
  command: {
    type: 'AssignRedemption',
    data: { ...target, redemptionId: id, customerId, externalId, email },
  } satisfies PromotionCodeCommand,
  event: {
    type: 'RedemptionAssigned',
    data: {
      promotion_code_id: 'promo_1',
      redemption_id: id,
      customer_id: customerId,
      external_id: externalId,
      email,
      assigned_at: now,
    },
  } satisfies PromotionCodeEvent,
});
const confirm = (id: string): PromotionCodeCommand => ({
  type: 'ConfirmRedemption',
  data: { ...target, redemptionId: id, orderId: 'ord_1', customerId: 'cus_1', externalId: null },
});
const redeemed = (id: string): PromotionCodeEvent => ({
  type: 'PromotionCodeRedeemed',
  data: {
    promotion_code_id: 'promo_1',
    redemption_id: id,
    code: 'SPRING',
    coupon_id: 'cpn_1',
    checkout_session_id: 'cs_1',
    order_id: 'ord_1',
    customer_id: 'cus_1',
    external_id: null,
    discount_amount: 10,
    redeemed_at: now,
    object: {
      id,
      promotion_code_id: 'promo_1',
      customer_id: 'cus_1',
      order_id: 'ord_1',
      discount_amount: 10,
      status: 'ACTIVE',
      redeemed_at: now,
    },
  },
});
const release = (id: string): PromotionCodeCommand => ({
  type: 'ReleaseRedemption',
  data: { ...target, redemptionId: id },
});
const released = (id: string): PromotionCodeEvent => ({
  type: 'RedemptionReleased',
  data: { promotion_code_id: 'promo_1', redemption_id: id, released_at: now },
});
const voidIt = (id: string): PromotionCodeCommand => ({
  type: 'VoidRedemption',
  data: { ...target, redemptionId: id },
});
const voided = (id: string): PromotionCodeEvent => ({
  type: 'RedemptionVoided',
  data: { promotion_code_id: 'promo_1', redemption_id: id, voided_at: now },
});

describe('PromotionCode', () => {
  describe('when new', () => {
    it('is created with UTC timestamps', () =>
      spec
        .given([])
        .when({
          type: 'CreatePromotionCode',
          data: { ...target, fields: { ...fields, valid_from: '2026-01-01T08:00:00+08:00' } },
        })
        .then([
          { ...created, data: { ...created.data, valid_from: '2026-01-01T00:00:00.000Z' } } as PromotionCodeEvent,
        ]));
    it('takes no reservation', () =>
      spec.given([]).when(reserve('red_1', 'cs_1')).thenThrows('No such promotion code'));
  });

  describe('when updated', () => {
    const update = (changes: object): PromotionCodeCommand => ({
      type: 'UpdatePromotionCode',
      data: { ...target, changes },
    });
    it('records the changed fields', () =>
      spec
        .given([created])
        .when(update({ active: false, max_redemptions: 2 }))
        .then([
          {
            type: 'PromotionCodeUpdated',
            data: { promotion_code_id: 'promo_1', changes: { active: false }, updated_at: now },
          },
        ]));
    it('checks the window on the merged code', () =>
      spec
        .given([
          { ...created, data: { ...created.data, valid_until: '2026-02-01T00:00:00.000Z' } } as PromotionCodeEvent,
        ])
        .when(update({ valid_from: '2026-03-01T00:00:00Z' }))
        .thenThrows(ApiError));
    it('is absent to another organization', () =>
      spec
        .given([created])
        .when({ type: 'UpdatePromotionCode', data: { ...target, organization: 'org_2', changes: { active: false } } })
        .thenThrows('No such promotion code'));
  });

  describe('when reserving', () => {
    it('holds a redemption', () =>
      spec
        .given([created])
        .when(reserve('red_1', 'cs_1'))
        .then([reserved('red_1', 'cs_1')]));
    it('returns the held one for the same session', () =>
      spec
        .given([created, reserved('red_1', 'cs_1')])
        .when(reserve('red_2', 'cs_1'))
        .then([]));
    it('is EXHAUSTED when reserved + active reach the cap', () =>
      spec
        .given([created, reserved('red_1', 'cs_1'), reserved('red_2', 'cs_2'), redeemed('red_2')])
        .when(reserve('red_3', 'cs_3'))
        .thenThrows('redemption limit'));
    it('counts released and voided redemptions no more', () =>
      spec
        .given([created, reserved('red_1', 'cs_1'), released('red_1'), reserved('red_2', 'cs_2'), voided('red_2')])
        .when(reserve('red_3', 'cs_3'))
        .then([reserved('red_3', 'cs_3')]));
    it('is ALREADY_USED past max_redemptions_per_customer', () =>
      spec
        .given([created, reserved('red_1', 'cs_1', 'cus_1')])
        .when(reserve('red_2', 'cs_2', 'cus_1'))
        .thenThrows('already used'));
    it('is INACTIVE for an inactive code', () =>
      spec
        .given([
          created,
          {
            type: 'PromotionCodeUpdated',
            data: { promotion_code_id: 'promo_1', changes: { active: false }, updated_at: now },
          },
        ])
        .when(reserve('red_1', 'cs_1'))
        .thenThrows('not active'));
    it('is ALREADY_USED for the same email, whatever else names the buyer', () =>
      spec
        .given([created, reserved('red_1', 'cs_1', null, 'mei@example.com')])
        .when(reserve('red_2', 'cs_2', 'cus_9', 'mei@example.com'))
        .thenThrows('already used'));
  });

  describe('when assigning the paying customer', () => {
    it('names the customer on the reserved redemption', () => {
      const { command, event } = assign('red_1', 'cus_1', 'mei@example.com', 'u_1');
      spec
        .given([created, reserved('red_1', 'cs_1')])
        .when(command)
        .then([event]);
    });
    it('changes nothing when the same customer is assigned again', () => {
      const { command, event } = assign('red_1', 'cus_1', 'mei@example.com');
      spec
        .given([created, reserved('red_1', 'cs_1'), event])
        .when(command)
        .then([]);
    });
    it('is ALREADY_USED when another held redemption names the customer by another name', () =>
      // Session 1 was opened by email, session 2 by customer id: both are cus_1 at payment.
      spec
        .given([created, reserved('red_1', 'cs_1', null, 'mei@example.com'), reserved('red_2', 'cs_2', 'cus_1')])
        .when(assign('red_2', 'cus_1', 'mei@example.com').command)
        .thenThrows('already used'));
    it('counts a voided redemption of the customer no more', () =>
      spec
        .given([created, reserved('red_1', 'cs_1', 'cus_1'), voided('red_1'), reserved('red_2', 'cs_2')])
        .when(assign('red_2', 'cus_1', null).command)
        .then([assign('red_2', 'cus_1', null).event]));
    it('refuses a redemption that is no longer held', () =>
      spec
        .given([created, reserved('red_1', 'cs_1'), released('red_1')])
        .when(assign('red_1', 'cus_1', null).command)
        .thenThrows('no longer held'));
    it('is 404 for an unknown redemption', () =>
      spec
        .given([created])
        .when(assign('red_x', 'cus_1', null).command)
        .thenThrows('No such redemption'));
  });

  describe('confirm, release and void', () => {
    const held = [created, reserved('red_1', 'cs_1')];
    it('confirms a reserved redemption', () =>
      spec
        .given(held)
        .when(confirm('red_1'))
        .then([redeemed('red_1')]));
    it('confirms a released one (paid while expiring)', () =>
      spec
        .given([...held, released('red_1')])
        .when(confirm('red_1'))
        .then([redeemed('red_1')]));
    it('confirms once', () =>
      spec
        .given([...held, redeemed('red_1')])
        .when(confirm('red_1'))
        .then([]));
    it('ignores an unknown redemption', () => spec.given(held).when(confirm('red_x')).then([]));
    it('releases a reserved one only', () => {
      spec
        .given(held)
        .when(release('red_1'))
        .then([released('red_1')]);
      spec
        .given([...held, redeemed('red_1')])
        .when(release('red_1'))
        .then([]);
      spec.given(held).when(release('red_x')).thenThrows('No such redemption');
    });
    it('voids an active or reserved one, once', () => {
      spec
        .given([...held, redeemed('red_1')])
        .when(voidIt('red_1'))
        .then([voided('red_1')]);
      spec
        .given(held)
        .when(voidIt('red_1'))
        .then([voided('red_1')]);
      spec
        .given([...held, voided('red_1')])
        .when(voidIt('red_1'))
        .then([]);
    });
  });

  describe('snapshot (docs/decisions/0010-snapshots.md)', () => {
    const history: PromotionCodeEvent[] = [
      created,
      {
        type: 'PromotionCodeUpdated',
        data: {
          promotion_code_id: 'promo_1',
          changes: { max_redemptions: 5, metadata: { tier: 'gold' } },
          updated_at: now,
        },
      },
      reserved('red_2', 'cs_2', 'cus_2', 'b@example.com'),
      reserved('red_1', 'cs_1'),
      // An event from before customer identity, without `email`.
      {
        type: 'RedemptionReserved',
        data: {
          promotion_code_id: 'promo_1',
          redemption_id: 'red_3',
          checkout_session_id: 'cs_3',
          customer_id: null,
          external_id: null,
          discount_amount: 10,
          reserved_at: now,
        },
      },
      assign('red_1', 'cus_1', 'a@example.com').event,
      redeemed('red_1'),
      released('red_2'),
      voided('red_3'),
      reserved('red_4', 'cs_4', 'cus_4'),
    ];
    const { initialState, evolve, decide } = promotionCodeAggregate;
    const state = history.reduce(evolve, initialState());

    it('opts in with a version', () => expect(promotionCodeAggregate.snapshot?.version).toBe(1));

    it('round-trips through JSON exactly, redemptions in the order they were reserved', () => {
      const restored = JSON.parse(JSON.stringify(state)) as typeof state;
      expect(restored).toStrictEqual(state);
      expect(restored.status === 'Existing' && Object.keys(restored.redemptions)).toEqual([
        'red_2',
        'red_1',
        'red_3',
        'red_4',
      ]);
    });

    it('decides from the restored state as from the replayed one', () => {
      const restored = JSON.parse(JSON.stringify(state)) as typeof state;
      for (const command of [reserve('red_5', 'cs_5', 'cus_5'), reserve('red_6', 'cs_6', 'cus_2'), voidIt('red_1')]) {
        const attempt = (s: typeof state) => {
          try {
            return decide(command, s);
          } catch (error) {
            return (error as Error).message;
          }
        };
        expect(attempt(restored)).toStrictEqual(attempt(state));
      }
    });
  });
});
