import { deciderSpec } from '@billing/testing';
import { sessionAggregate } from './aggregate';
import type { Einvoice } from '@billing/contracts';
import type { ChooseEinvoice, CompleteSession, ExpireSession, FailPayment, RecordCharge, StartPayment } from './decide';
import { type Buyer, type CheckoutSessionCreatedData, type SessionEvent, evolve, initialState } from './session';

const spec = deciderSpec(sessionAggregate);
const t0 = new Date('2026-01-01T00:00:00.000Z');
const at = (minutes: number) => new Date(t0.getTime() + minutes * 60_000);

const createdData: CheckoutSessionCreatedData = {
  session_id: 'cs_1',
  organization: 'org_1',
  environment: 'SANDBOX',
  mode: 'PAYMENT',
  product: {
    id: 'prod_1',
    name: 'E-book',
    slug: 'e-book',
    type: 'ONE_TIME',
    price: 300,
    interval: null,
    interval_count: 1,
    trial_days: null,
  },
  success_url: 'https://shop.example/ok?s={CHECKOUT_SESSION_ID}',
  cancel_url: 'https://shop.example/cancel',
  customer_email: 'prefilled@example.com',
  customer_name: null,
  external_customer_id: 'user_1',
  collect_payment_method: 'always',
  requires_payment_method: true,
  metadata: { ref: 'friend' },
  einvoice: null,
  promotion_code: 'SPRING20',
  promotion_code_id: 'promo_1',
  redemption_id: 'red_1',
  discount: {
    type: 'PERCENTAGE',
    amount: 60,
    discounted_amount: 240,
    label: '20% off',
    bonus_trial_days: 0,
    bonus_months: 0,
  },
  order: {
    id: 'ord_1',
    status: 'OPEN',
    product_id: 'prod_1',
    amount_subtotal: 300,
    discount_amount: 60,
    amount_total: 240,
    currency: 'TWD',
    metadata: { ref: 'friend' },
    created_at: t0.toISOString(),
    paid_at: null,
  },
  intent: {
    id: 'pi_1',
    kind: 'payment_intent',
    status: 'requires_payment_method',
    amount: 240,
    currency: 'TWD',
    client_secret: 'pi_1_secret_x',
    payment_method: null,
    last_payment_error: null,
    created_at: t0.toISOString(),
    succeeded_at: null,
  },
  created_at: t0.toISOString(),
  expires_at: at(30).toISOString(),
};

const created: SessionEvent = { type: 'CheckoutSessionCreated', data: createdData };
const buyer: Buyer = { email: 'typed@example.com', name: 'Mei', customer_id: null };
const visa = { brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2034 };
/** The processor's key of the session's n-th charge that the processor did not decline. */
const key = (n = 1) => `pi_1-${n}`;
const started = (attemptId: string, when: Date, chargeKey = key()): SessionEvent => ({
  type: 'PaymentAttemptStarted',
  data: { session_id: 'cs_1', attempt_id: attemptId, charge_key: chargeKey, started_at: when.toISOString() },
});
const start = (attemptId: string, now: Date): StartPayment => ({
  type: 'StartPayment',
  data: { sessionId: 'cs_1', attemptId, now },
});
const fail = (attemptId: string, outcomeUnknown = false): FailPayment => ({
  type: 'FailPayment',
  data: {
    attemptId,
    code: outcomeUnknown ? 'processing_error' : 'card_declined',
    message: outcomeUnknown ? 'The payment processor did not answer' : 'Your card was declined.',
    requiresAction: false,
    ...(outcomeUnknown ? { outcomeUnknown } : {}),
    now: at(2),
  },
});
const failed = (attemptId: string, outcomeUnknown = false): SessionEvent => ({
  type: 'PaymentAttemptFailed',
  data: {
    session_id: 'cs_1',
    attempt_id: attemptId,
    code: outcomeUnknown ? 'processing_error' : 'card_declined',
    message: outcomeUnknown ? 'The payment processor did not answer' : 'Your card was declined.',
    requires_action: false,
    ...(outcomeUnknown ? { outcome_unknown: true } : {}),
    failed_at: at(2).toISOString(),
  },
});
const record = (attemptId: string, chargeKey = key(), by: Buyer = buyer): RecordCharge => ({
  type: 'RecordCharge',
  data: { attemptId, chargeKey, paymentMethod: visa, buyer: by, now: at(2.5) },
});
const succeeded = (attemptId: string, chargeKey = key(), by: Buyer = buyer): SessionEvent => ({
  type: 'PaymentAttemptSucceeded',
  data: {
    session_id: 'cs_1',
    attempt_id: attemptId,
    charge_key: chargeKey,
    payment_method: visa,
    buyer: by,
    succeeded_at: at(2.5).toISOString(),
  },
});
const complete = (subscriptionId: string | null = null): CompleteSession => ({
  type: 'CompleteSession',
  data: { subscriptionId, now: at(3) },
});
const expire = (now: Date, unchargedKey?: string): ExpireSession => ({
  type: 'ExpireSession',
  data: unchargedKey ? { now, unchargedKey } : { now },
});

describe('Checkout session', () => {
  describe('when it does not exist', () => {
    it('is created with its order and payment intent', () => {
      spec.given([]).when({ type: 'CreateSession', data: createdData }).then([created]);
    });
    it('cannot be paid: not found', () => {
      spec
        .given([])
        .when(start('a1', at(1)))
        .thenThrows(/No such checkout session/);
    });
    it('expires to nothing', () => {
      spec
        .given([])
        .when(expire(at(31)))
        .then([]);
    });
  });

  describe('when OPEN', () => {
    it('cannot be created again', () => {
      spec
        .given([created])
        .when({ type: 'CreateSession', data: createdData })
        .thenThrows(/already exists/);
    });
    it('starts a payment attempt before expires_at', () => {
      spec
        .given([created])
        .when(start('a1', at(29)))
        .then([started('a1', at(29))]);
    });
    it('refuses a payment at or after expires_at', () => {
      spec
        .given([created])
        .when(start('a1', at(30)))
        .thenThrows(/expired/);
    });
    it('refuses a second attempt while one is under way: exactly one charge', () => {
      spec
        .given([created, started('a1', at(1))])
        .when(start('a2', at(1)))
        .thenThrows(/in progress/);
    });
    it('takes over an attempt that has been under way for a minute or more (a crashed charge), under the same key', () => {
      spec
        .given([created, started('a1', at(1))])
        .when(start('a2', at(2)))
        .then([started('a2', at(2), key(1))]);
    });
    it('records a decline of the current attempt, and then takes a new one under a new key', () => {
      spec
        .given([created, started('a1', at(1))])
        .when(fail('a1'))
        .then([failed('a1')]);
      spec
        .given([created, started('a1', at(1)), failed('a1')])
        .when(start('a2', at(2)))
        .then([started('a2', at(2), key(2))]);
    });
    it('keeps the key after a processor that did not answer: the retry gets the first charge, if any', () => {
      spec
        .given([created, started('a1', at(1))])
        .when(fail('a1', true))
        .then([failed('a1', true)]);
      spec
        .given([created, started('a1', at(1)), failed('a1', true)])
        .when(start('a2', at(2)))
        .then([started('a2', at(2), key(1))]);
    });
    it('names the buyer of the attempt when given', () => {
      spec
        .given([created])
        .when({ type: 'StartPayment', data: { sessionId: 'cs_1', attemptId: 'a1', buyer, now: at(1) } })
        .then([
          {
            type: 'PaymentAttemptStarted',
            data: { session_id: 'cs_1', attempt_id: 'a1', charge_key: key(), buyer, started_at: at(1).toISOString() },
          },
        ]);
    });
    it('ignores a late answer of a superseded attempt', () => {
      spec
        .given([created, started('a1', at(1)), started('a2', at(2))])
        .when(fail('a1'))
        .then([]);
    });
    it('records the charge of the current key, once, whichever attempt asks', () => {
      spec
        .given([created, started('a1', at(1))])
        .when(record('a1'))
        .then([succeeded('a1')]);
      // A stale attempt taken over charged under the same key: either one records that charge.
      spec
        .given([created, started('a1', at(1)), started('a2', at(2))])
        .when(record('a1'))
        .then([succeeded('a1')]);
      spec
        .given([created, started('a1', at(1)), succeeded('a1')])
        .when(record('a2'))
        .then([]);
    });
    it('refuses a charge under another key than the current one', () => {
      spec
        .given([created, started('a1', at(1)), failed('a1'), started('a2', at(2), key(2))])
        .when(record('a1', key(1)))
        .thenThrows(/not the current charge/);
    });
    it('is never charged again once a charge is recorded: it only completes', () => {
      spec
        .given([created, started('a1', at(1)), succeeded('a1')])
        .when(start('a2', at(5)))
        .thenThrows(/already paid/);
    });
    it('completes from the recorded charge, keeping the prefilled email and filling the name', () => {
      spec
        .given([created, started('a1', at(1)), succeeded('a1')])
        .when(complete())
        .then([
          {
            type: 'CheckoutSessionCompleted',
            data: {
              session_id: 'cs_1',
              order_id: 'ord_1',
              organization: 'org_1',
              environment: 'SANDBOX',
              mode: 'PAYMENT',
              customer_id: null,
              subscription_id: null,
              test_clock: null,
              trial_days: 0,
              coupon: null,
              customer_email: 'prefilled@example.com',
              customer_name: 'Mei',
              external_customer_id: 'user_1',
              locale: null,
              product_id: 'prod_1',
              product: created.data.product,
              amount_subtotal: 300,
              amount_total: 240,
              discount_amount: 60,
              currency: 'TWD',
              promotion_code_id: 'promo_1',
              redemption_id: 'red_1',
              payment_intent_id: 'pi_1',
              setup_intent_id: null,
              metadata: { ref: 'friend' },
              einvoice: null,
              payment_method: visa,
              // The simulator's trade is the charge key, as it was sent.
              charge: { processor: 'sandbox', processor_reference: 'pi_1-1' },
              completed_at: at(3).toISOString(),
              object: expect.objectContaining({
                object: 'checkout.session',
                id: 'cs_1',
                status: 'COMPLETE',
                order_id: 'ord_1',
                customer_name: 'Mei',
                metadata: { ref: 'friend' },
                completed_at: at(3).toISOString(),
              }),
            },
          },
        ]);
    });
    it('names the customer billing resolved for the charge and the subscription billing will start', () => {
      spec
        .given([created, started('a1', at(1)), succeeded('a1', key(), { ...buyer, customer_id: 'cus_1' })])
        .when(complete('sub_1'))
        .then([
          expect.objectContaining({
            type: 'CheckoutSessionCompleted',
            data: expect.objectContaining({
              customer_id: 'cus_1',
              subscription_id: 'sub_1',
              object: expect.objectContaining({ customer_id: 'cus_1', subscription_id: 'sub_1' }),
            }),
          }),
        ]);
    });
    it("is in the language the buyer paid in when the merchant chose none; the merchant's choice comes first", () => {
      const inEnglish = { ...buyer, locale: 'en' as const };
      spec
        .given([created, started('a1', at(1)), succeeded('a1', key(), inEnglish)])
        .when(complete())
        .then([expect.objectContaining({ data: expect.objectContaining({ locale: 'en' }) })]);
      const chosen = { ...created, data: { ...created.data, locale: 'zh-TW' as const } };
      spec
        .given([chosen, started('a1', at(1)), succeeded('a1', key(), inEnglish)])
        .when(complete())
        .then([expect.objectContaining({ data: expect.objectContaining({ locale: 'zh-TW' }) })]);
    });
    it('cannot complete without a recorded charge', () => {
      spec
        .given([created, started('a1', at(1))])
        .when(complete())
        .thenThrows(/no recorded charge/);
    });
    it('is not expired once charged, even past expires_at: the sweep completes it', () => {
      spec
        .given([created, started('a1', at(1)), succeeded('a1')])
        .when(expire(at(40)))
        .then([]);
    });
    it('is expired past a charge with no recorded outcome only when the processor says it never charged that key', () => {
      const history = [created, started('a1', at(1)), failed('a1', true)];
      spec
        .given(history)
        .when(expire(at(40)))
        .then([]);
      spec
        .given(history)
        .when(expire(at(40), key(2)))
        .then([]);
      spec
        .given(history)
        .when(expire(at(40), key(1)))
        .then([expect.objectContaining({ type: 'CheckoutSessionExpired' })]);
      // A crashed attempt (no answer recorded at all) likewise, once it is stale.
      spec
        .given([created, started('a1', at(29))])
        .when(expire(at(31), key(1)))
        .then([expect.objectContaining({ type: 'CheckoutSessionExpired' })]);
    });
    it('is expired after declines without asking the processor', () => {
      spec
        .given([created, started('a1', at(1)), failed('a1')])
        .when(expire(at(40)))
        .then([expect.objectContaining({ type: 'CheckoutSessionExpired' })]);
    });
    it('is not expired before expires_at', () => {
      spec
        .given([created])
        .when(expire(at(29)))
        .then([]);
    });
    it('expires at expires_at, naming its redemption and order', () => {
      spec
        .given([created])
        .when(expire(at(30)))
        .then([
          {
            type: 'CheckoutSessionExpired',
            data: {
              session_id: 'cs_1',
              redemption_id: 'red_1',
              order_id: 'ord_1',
              expired_at: at(30).toISOString(),
              object: expect.objectContaining({ id: 'cs_1', status: 'EXPIRED' }),
            },
          },
        ]);
    });
    it('is not expired while a charge started in time is under way', () => {
      spec
        .given([created, started('a1', at(29.9))])
        .when(expire(at(30.5)))
        .then([]);
    });
  });

  describe('when COMPLETE', () => {
    const charged = [created, started('a1', at(1)), succeeded('a1')];
    const completed = sessionAggregate.decide(
      complete(),
      charged.reduce(sessionAggregate.evolve, sessionAggregate.initialState()),
    );
    const history = [...charged, ...completed];
    it('completes once: completing again changes nothing', () => {
      spec.given(history).when(complete()).then([]);
    });
    it('cannot be paid again', () => {
      spec
        .given(history)
        .when(start('a2', at(4)))
        .thenThrows(/already paid/);
    });
    it('never expires', () => {
      spec
        .given(history)
        .when(expire(at(40)))
        .then([]);
    });
    it('links the subscription billing created, once', () => {
      const linked: SessionEvent = {
        type: 'SubscriptionLinked',
        data: { session_id: 'cs_1', subscription_id: 'sub_1', linked_at: at(5).toISOString() },
      };
      spec
        .given(history)
        .when({ type: 'LinkSubscription', data: { subscriptionId: 'sub_1', now: at(5) } })
        .then([linked]);
      spec
        .given([...history, linked])
        .when({ type: 'LinkSubscription', data: { subscriptionId: 'sub_1', now: at(6) } })
        .then([]);
    });
    it('records a refund of the paid order once, with its metadata', () => {
      const refund = { type: 'RecordRefund' as const, data: { reason: 'duplicate_subscription', now: at(7) } };
      const refunded = sessionAggregate.decide(
        refund,
        history.reduce(sessionAggregate.evolve, sessionAggregate.initialState()),
      );
      expect(refunded).toEqual([
        {
          type: 'OrderRefunded',
          data: expect.objectContaining({
            order_id: 'ord_1',
            redemption_id: 'red_1',
            reason: 'duplicate_subscription',
            object: expect.objectContaining({ status: 'REFUNDED', amount_refunded: 240, metadata: { ref: 'friend' } }),
          }),
        },
      ]);
      spec
        .given([...history, ...refunded])
        .when(refund)
        .then([]);
    });
    it('folds to COMPLETE with a paid order and a succeeded intent', () => {
      const state = history.reduce(sessionAggregate.evolve, sessionAggregate.initialState());
      expect(state).toMatchObject({
        status: 'Exists',
        session: {
          status: 'COMPLETE',
          completed_at: at(3).toISOString(),
          attempt: null,
          order: { status: 'PAID', paid_at: at(3).toISOString() },
          intent: { status: 'succeeded' },
        },
      });
    });
  });

  describe('when EXPIRED', () => {
    const expired: SessionEvent = {
      type: 'CheckoutSessionExpired',
      data: { session_id: 'cs_1', redemption_id: 'red_1', order_id: 'ord_1', expired_at: at(30).toISOString() },
    };
    it('has nothing to refund', () => {
      spec
        .given([created, expired])
        .when({ type: 'RecordRefund', data: { reason: 'requested_by_customer', now: at(40) } })
        .then([]);
    });
    it('cannot be paid', () => {
      spec
        .given([created, expired])
        .when(start('a1', at(10)))
        .thenThrows(/expired/);
    });
    it('is expired only once', () => {
      spec
        .given([created, expired])
        .when(expire(at(40)))
        .then([]);
    });
    it('folds to a canceled order and intent', () => {
      expect([created, expired].reduce(sessionAggregate.evolve, sessionAggregate.initialState())).toMatchObject({
        session: { status: 'EXPIRED', order: { status: 'CANCELED' }, intent: { status: 'canceled' } },
      });
    });
  });
});

describe("changing the promotion code of an open checkout (an embedded checkout's coupon box, the hosted page's field)", () => {
  const quarterOff = {
    redemption_id: 'red_2',
    promotion_code_id: 'promo_2',
    status: 'RESERVED' as const,
    discount: {
      type: 'PERCENTAGE' as const,
      amount: 75,
      discounted_amount: 225,
      label: '25% off',
      bonus_trial_days: 0,
      bonus_months: 0,
    },
    amount_after_discount: 225,
    coupon_name: 'Quarter off',
  };
  const changed = (fields: Record<string, unknown>): SessionEvent =>
    ({
      type: 'PromotionCodeChanged',
      data: { session_id: 'cs_1', changed_at: at(1).toISOString(), ...fields },
    }) as SessionEvent;

  it('records the new code, discount and amounts', () => {
    spec
      .given([created])
      .when({ type: 'ChangePromotion', data: { code: 'QUARTER', redemption: quarterOff, now: at(1) } })
      .then([
        changed({
          promotion_code: 'QUARTER',
          promotion_code_id: 'promo_2',
          redemption_id: 'red_2',
          discount: quarterOff.discount,
          coupon: null,
          coupon_name: 'Quarter off',
          amount_subtotal: 300,
          discount_amount: 75,
          amount_total: 225,
          requires_payment_method: true,
        }),
      ]);
  });

  it('removes the code: the full price again', () => {
    spec
      .given([created])
      .when({ type: 'ChangePromotion', data: { code: null, redemption: null, now: at(1) } })
      .then([
        changed({
          promotion_code: null,
          promotion_code_id: null,
          redemption_id: null,
          discount: null,
          coupon: null,
          coupon_name: null,
          amount_subtotal: 300,
          discount_amount: 0,
          amount_total: 300,
          requires_payment_method: true,
        }),
      ]);
  });

  describe('on a checkout created without a code that allows one on the hosted page', () => {
    const plain: SessionEvent = {
      type: 'CheckoutSessionCreated',
      data: {
        ...createdData,
        allow_promotion_codes: true,
        promotion_code: null,
        promotion_code_id: null,
        redemption_id: null,
        discount: null,
        order: { ...createdData.order, discount_amount: 0, amount_total: 300 },
        intent: { ...createdData.intent, amount: 300 },
      },
    };
    const apply = (redemption: typeof quarterOff, replacing: string | null = null) => ({
      type: 'ChangePromotion' as const,
      data: { code: 'QUARTER', redemption, replacing, now: at(1) },
    });
    const quarterApplied = changed({
      promotion_code: 'QUARTER',
      promotion_code_id: 'promo_2',
      redemption_id: 'red_2',
      discount: quarterOff.discount,
      coupon: null,
      coupon_name: 'Quarter off',
      amount_subtotal: 300,
      discount_amount: 75,
      amount_total: 225,
      requires_payment_method: true,
    });

    it('given no code, when the buyer applies one, records it: the intent charges the discounted amount', () => {
      spec.given([plain]).when(apply(quarterOff)).then([quarterApplied]);
      expect([plain, quarterApplied].reduce(evolve, initialState())).toMatchObject({
        session: {
          allow_promotion_codes: true,
          promotion_code: 'QUARTER',
          coupon_name: 'Quarter off',
          promotion_code_by_buyer: true,
          order: { amount_subtotal: 300, discount_amount: 75, amount_total: 225 },
          intent: { amount: 225 },
        },
      });
    });

    it('given the same reservation recorded (the same code applied twice at once), records nothing', () => {
      spec.given([plain, quarterApplied]).when(apply(quarterOff)).then([]);
    });

    it('given another code recorded since the caller looked, refuses the later change with 409', () => {
      const other = { ...quarterOff, redemption_id: 'red_3', promotion_code_id: 'promo_3' };
      spec
        .given([plain, quarterApplied])
        .when(apply(other, null))
        .thenThrows(/changed at the same time/);
      spec
        .given([plain, quarterApplied])
        .when({ type: 'ChangePromotion', data: { code: null, redemption: null, replacing: null, now: at(1) } })
        .thenThrows(/changed at the same time/);
    });

    it('given a code applied after the payer read the total, when the payment starts at the old total, refuses it: nothing starts', () => {
      const startAt = (amount: number): StartPayment => ({
        type: 'StartPayment',
        data: { sessionId: 'cs_1', attemptId: 'pay_1', amount, now: at(2) },
      });
      spec
        .given([plain, quarterApplied])
        .when(startAt(300))
        .thenThrows(/total of this checkout changed/);
      spec
        .given([plain, quarterApplied])
        .when(startAt(225))
        .then([started('pay_1', at(2))]);
    });

    it('a code the merchant gave at creation is not the buyer’s; a session made before reads as allowing none', () => {
      expect([created].reduce(evolve, initialState())).toMatchObject({
        session: { promotion_code: 'SPRING20', allow_promotion_codes: false },
      });
      expect([created].reduce(evolve, initialState())).not.toHaveProperty('session.promotion_code_by_buyer');
    });
  });

  it('refuses while a payment is under way, once paid, and once expired', () => {
    const change = { type: 'ChangePromotion' as const, data: { code: null, redemption: null, now: at(1) } };
    spec
      .given([created, started('pay_1', at(0.5))])
      .when(change)
      .thenThrows(/in progress/);
    spec
      .given([created, started('pay_1', at(0.5)), succeeded('pay_1')])
      .when(change)
      .thenThrows(/paid/);
    spec
      .given([created])
      .when({ ...change, data: { ...change.data, now: at(31) } })
      .thenThrows(/expired/);
  });

  it('refuses while a charge of the current amount may have been made (no answer yet)', () => {
    const change = { type: 'ChangePromotion' as const, data: { code: null, redemption: null, now: at(5) } };
    spec
      .given([created, started('pay_1', at(0.5)), failed('pay_1', true)])
      .when(change)
      .thenThrows(/may have been made/);
    spec
      .given([created, started('pay_1', at(0.5))])
      .when(change)
      .thenThrows(/may have been made/);
  });
});

describe("the buyer's e-invoice choice on the hosted page", () => {
  const company = { type: 'B2B' as const, tax_id: '04595257', company_name: 'Leaf Co' };
  const choose = (einvoice: Einvoice, now = at(1)): ChooseEinvoice => ({
    type: 'ChooseEinvoice',
    data: { einvoice, now },
  });
  const chosen = (einvoice: Einvoice): SessionEvent => ({
    type: 'EinvoiceChosen',
    data: { session_id: 'cs_1', einvoice, chosen_at: at(1).toISOString() },
  });

  it('given an open checkout, when the buyer chooses, records the choice in place of the merchant’s', () => {
    spec
      .given([created])
      .when(choose(company))
      .then([chosen(company)]);
    const session = [created, chosen(company)].reduce(evolve, initialState());
    expect(session).toMatchObject({ session: { einvoice: company } });
  });

  it('given the same choice recorded, when chosen again in another field order, records nothing', () => {
    spec
      .given([created, chosen(company)])
      .when(choose({ company_name: 'Leaf Co', tax_id: '04595257', type: 'B2B' }))
      .then([]);
  });

  it('the completion carries the buyer’s choice to billing', () => {
    const paid = [created, chosen(company), started('pay_1', at(2)), succeeded('pay_1')];
    const [completed] = sessionAggregate.decide(complete(), paid.reduce(evolve, initialState()));
    expect(completed).toMatchObject({ type: 'CheckoutSessionCompleted', data: { einvoice: company } });
  });

  it('refuses a choice that breaks its format, once charged, and once expired', () => {
    spec
      .given([created])
      .when(choose({ type: 'MOBILE_BARCODE', carrier: '/abc123' }))
      .thenThrows(/e-invoice choice is not valid/);
    spec
      .given([created, started('pay_1', at(0.5)), succeeded('pay_1')])
      .when(choose(company))
      .thenThrows(/paid/);
    spec
      .given([created])
      .when(choose(company, at(31)))
      .thenThrows(/expired/);
  });
});

describe('an ATM or convenience-store payment (docs/payments.md)', () => {
  const instructions = {
    type: 'atm' as const,
    bank_code: '812',
    account: '9103522175887271',
    payment_code: null,
    amount: 240,
    expires_at: '2026-01-03T15:59:59.000Z',
  };
  const startedAtEcpay: SessionEvent = {
    type: 'PaymentAttemptStarted',
    data: {
      session_id: 'cs_1',
      attempt_id: 'a1',
      charge_key: key(),
      processor: 'ecpay',
      started_at: at(1).toISOString(),
    },
  };
  const recordAsync = (tradeNo = 'T1', chargeKey = key()) =>
    ({
      type: 'RecordAsyncPayment',
      data: { chargeKey, processor: 'ecpay', tradeNo, instructions, now: at(2) },
    }) as const;
  const decideOn = (events: SessionEvent[], command: Parameters<typeof sessionAggregate.decide>[0]) =>
    sessionAggregate.decide(command, events.reduce(evolve, initialState()));
  const pending = () => decideOn([created, startedAtEcpay], recordAsync())[0]!;

  it('given a payment started at ECPay, when its account is issued, records it with the session showing how to pay', () => {
    expect(pending()).toMatchObject({
      type: 'CheckoutAsyncPaymentPending',
      data: {
        session_id: 'cs_1',
        attempt_id: 'a1',
        charge_key: key(),
        processor: 'ecpay',
        trade_no: 'T1',
        instructions,
        object: { status: 'OPEN', payment_instructions: instructions, expires_at: instructions.expires_at },
      },
    });
  });

  it('when the same trade is posted again, records nothing; another trade or key is refused', () => {
    expect(decideOn([created, startedAtEcpay, pending()], recordAsync())).toEqual([]);
    expect(() => decideOn([created, startedAtEcpay], recordAsync('T1', key(2)))).toThrow(/not waiting for trade/);
    expect(() => decideOn([created], recordAsync())).toThrow(/not waiting for trade/);
  });

  it('while it waits, takes no other payment nor code, and does not expire before the payment deadline', () => {
    const waiting = [created, startedAtEcpay, pending()];
    expect(() => decideOn(waiting, start('a2', at(40)))).toThrow(/waits for its ATM or convenience-store payment/);
    const removeCode = { type: 'ChangePromotion' as const, data: { code: null, redemption: null, now: at(40) } };
    expect(() => decideOn(waiting, removeCode)).toThrow(/waits for its ATM or convenience-store payment/);
    expect(decideOn(waiting, expire(at(40), key()))).toEqual([]);
  });

  it('when paid, completes as a card payment does, and shows no instructions any more', () => {
    const waiting = [created, startedAtEcpay, pending()];
    const charged = decideOn(waiting, record('a1'));
    expect(charged).toMatchObject([{ type: 'PaymentAttemptSucceeded', data: { charge_key: key() } }]);
    const [completed] = decideOn([...waiting, ...charged], complete());
    expect(completed).toMatchObject({
      type: 'CheckoutSessionCompleted',
      data: { object: { status: 'COMPLETE' } },
    });
    expect((completed!.data as { object: object }).object).not.toHaveProperty('payment_instructions');
  });

  it('past the deadline, unpaid at ECPay, the payment expires and then the session', () => {
    const waiting = [created, startedAtEcpay, pending()];
    const after = new Date(Date.parse(instructions.expires_at) + 1000);
    expect(decideOn(waiting, expire(after))).toEqual([]);
    const events = decideOn(waiting, expire(after, key()));
    expect(events.map((e) => e.type)).toEqual(['CheckoutAsyncPaymentExpired', 'CheckoutSessionExpired']);
    expect(events[0]).toMatchObject({ data: { trade_no: 'T1', object: { status: 'EXPIRED' } } });
  });

  it('a payment the session cannot take is recorded once per trade, for a refund by hand', () => {
    const unmatched = (tradeNo: string) =>
      ({
        type: 'RecordUnmatchedPayment',
        data: { processor: 'ecpay', tradeNo, amount: 240, reason: 'paid_after_expiry', now: at(50) },
      }) as const;
    const [event] = decideOn([created], unmatched('T9'));
    expect(event).toEqual({
      type: 'CheckoutPaymentUnmatched',
      data: {
        session_id: 'cs_1',
        order_id: 'ord_1',
        processor: 'ecpay',
        trade_no: 'T9',
        amount: 240,
        reason: 'paid_after_expiry',
        detected_at: at(50).toISOString(),
      },
    });
    expect(decideOn([created, event!], unmatched('T9'))).toEqual([]);
    expect(decideOn([created, event!], unmatched('T10'))).toHaveLength(1);
  });
});
