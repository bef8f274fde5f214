import type { Subscription } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { subscriptionAggregate } from './aggregate';
import type { PlanFacts, SubscriptionCommand } from './decide';
import type { SubscriptionEvent } from './subscription';

const spec = deciderSpec(subscriptionAggregate);
const at = new Date('2026-01-31T10:00:00.000Z');
const who = { subscriptionId: 'sub_1', organization: 'org_1', environment: 'SANDBOX' as const, now: at };
const monthly: PlanFacts = {
  id: 'prod_1',
  name: 'Pro',
  slug: 'pro',
  price: 299,
  interval: 'month',
  interval_count: 1,
  trial_days: null,
};
const start = (plan: Partial<PlanFacts> = {}): SubscriptionCommand => ({
  type: 'StartSubscription',
  data: { ...who, customerId: 'cus_1', plan: { ...monthly, ...plan }, checkoutSessionId: 'cs_1', orderId: 'ord_1' },
});
const subscription: Subscription = {
  object: 'subscription',
  id: 'sub_1',
  customer_id: 'cus_1',
  product: { id: 'prod_1', name: 'Pro', slug: 'pro' },
  status: 'ACTIVE',
  price: 299,
  currency: 'TWD',
  interval: 'month',
  interval_count: 1,
  current_period_start: '2026-01-31T10:00:00.000Z',
  current_period_end: '2026-02-28T10:00:00.000Z',
  trial_end: null,
  cancel_at_period_end: false,
  canceled_at: null,
  checkout_session_id: 'cs_1',
  test_clock: null,
  billing_cycle_anchor: at.toISOString(),
  discount: null,
  created_at: at.toISOString(),
  updated_at: at.toISOString(),
  livemode: false,
};
const activated = (fields: Partial<Subscription> = {}): SubscriptionEvent => ({
  type: 'SubscriptionActivated',
  data: {
    subscription_id: 'sub_1',
    organization: 'org_1',
    environment: 'SANDBOX',
    checkout_session_id: 'cs_1',
    order_id: 'ord_1',
    object: { ...subscription, ...fields },
  },
});
const duplicate: SubscriptionCommand = {
  type: 'RecordDuplicatePayment',
  data: {
    ...who,
    checkoutSessionId: 'cs_2',
    orderId: 'ord_2',
    customerId: 'cus_1',
    productId: 'prod_1',
    amountTotal: 299,
  },
};

describe('Subscription', () => {
  describe('when a paid checkout starts it', () => {
    it('is ACTIVE for a first period clamped to the month end', () => spec.given([]).when(start()).then([activated()]));
    it("holds its plan's metered prices, and no field for a plan without them", () => {
      const prices = [{ meter: 'api_calls', unit_amount: 1, package_size: 100 }];
      spec
        .given([])
        .when(start({ metered_prices: prices }))
        .then([activated({ metered_prices: prices })]);
      spec
        .given([])
        .when(start({ metered_prices: [] }))
        .then([activated()]);
    });
    it('is TRIAL with trial_end when the plan has trial days', () =>
      spec
        .given([])
        .when(start({ trial_days: 14 }))
        .then([activated({ status: 'TRIAL', trial_end: '2026-02-14T10:00:00.000Z' })]));
    it('makes a free trial sold at checkout the first period, anchoring paid periods at its end, with the coupon', () => {
      const coupon = {
        coupon_id: 'cpn_1',
        discount_type: 'PERCENTAGE' as const,
        discount_amount: 20,
        duration: 'once' as const,
        duration_in_months: null,
      };
      const command = start();
      if (command.type !== 'StartSubscription') throw new Error('not a start');
      command.data.trialDays = 14;
      command.data.coupon = coupon;
      spec
        .given([])
        .when(command)
        .then([
          activated({
            status: 'TRIAL',
            trial_end: '2026-02-14T10:00:00.000Z',
            current_period_end: '2026-02-14T10:00:00.000Z',
            billing_cycle_anchor: '2026-02-14T10:00:00.000Z',
            discount: { ...coupon, starts_at: '2026-02-14T10:00:00.000Z' },
          }),
        ]);
    });
    it('runs the period over interval_count units', () =>
      spec
        .given([])
        .when(start({ interval: 'week', interval_count: 2 }))
        .then([activated({ interval: 'week', interval_count: 2, current_period_end: '2026-02-14T10:00:00.000Z' })]));
    it('cannot start twice', () => spec.given([activated()]).when(start()).thenThrows('already exists'));
  });

  describe('when a second checkout for the product is paid', () => {
    it('records the duplicate payment for a refund, with the live subscription', () =>
      spec
        .given([activated({ status: 'TRIAL' })])
        .when(duplicate)
        .then([
          {
            type: 'DuplicateSubscriptionPaid',
            data: {
              checkout_session_id: 'cs_2',
              order_id: 'ord_2',
              customer_id: 'cus_1',
              product_id: 'prod_1',
              amount_total: 299,
              existing_subscription_id: 'sub_1',
              status: 'TRIAL',
              detected_at: at.toISOString(),
            },
          },
        ]));
    it('is not a duplicate of a canceled subscription', () =>
      spec
        .given([activated({ status: 'CANCELED' })])
        .when(duplicate)
        .thenThrows('not live'));
    it('is not a duplicate of an absent subscription', () =>
      spec.given([]).when(duplicate).thenThrows('No such subscription'));
  });

  describe('when its trial ends', () => {
    const trialEnd = '2026-02-14T10:00:00.000Z';
    const inTrial = activated({ status: 'TRIAL', trial_end: trialEnd });
    const endTrial = (now: string): SubscriptionCommand => ({
      type: 'EndTrial',
      data: { subscriptionId: 'sub_1', now: new Date(now) },
    });

    it('goes on as ACTIVE for the period already paid, from trial_end on', () =>
      spec
        .given([inTrial])
        .when(endTrial('2026-02-14T10:00:30.000Z'))
        .then([
          {
            type: 'SubscriptionUpdated',
            data: {
              subscription_id: 'sub_1',
              object: {
                ...subscription,
                status: 'ACTIVE',
                trial_end: trialEnd,
                updated_at: '2026-02-14T10:00:30.000Z',
              },
            },
          },
        ]));
    it('waits before trial_end', () => spec.given([inTrial]).when(endTrial('2026-02-14T09:59:59.999Z')).then([]));
    it('changes nothing once ACTIVE, or for a subscription without a trial', () => {
      const ended: SubscriptionEvent = {
        type: 'SubscriptionUpdated',
        data: { subscription_id: 'sub_1', object: { ...subscription, status: 'ACTIVE', trial_end: trialEnd } },
      };
      spec.given([inTrial, ended]).when(endTrial('2026-03-01T00:00:00.000Z')).then([]);
      spec.given([activated()]).when(endTrial('2026-03-01T00:00:00.000Z')).then([]);
    });
    it('is not found for an absent subscription', () =>
      spec.given([]).when(endTrial('2026-03-01T00:00:00.000Z')).thenThrows('No such subscription'));
  });

  describe('when the merchant cancels or resumes', () => {
    const asked = new Date('2026-02-10T08:00:00.000Z');
    const cancel = (atPeriodEnd: boolean): SubscriptionCommand => ({
      type: 'CancelSubscription',
      data: { ...who, now: asked, atPeriodEnd },
    });
    const resume: SubscriptionCommand = { type: 'ResumeSubscription', data: { ...who, now: asked } };
    const endPeriod = (now: string): SubscriptionCommand => ({
      type: 'EndCanceledPeriod',
      data: { subscriptionId: 'sub_1', now: new Date(now) },
    });
    const canceling = {
      ...subscription,
      cancel_at_period_end: true,
      canceled_at: asked.toISOString(),
      updated_at: asked.toISOString(),
    };
    const pending: SubscriptionEvent = {
      type: 'SubscriptionUpdated',
      data: { subscription_id: 'sub_1', object: canceling },
    };

    it('sets cancel_at_period_end, keeping access to the end of the period', () =>
      spec.given([activated()]).when(cancel(true)).then([pending]));
    it('changes nothing when asked again', () => spec.given([activated(), pending]).when(cancel(true)).then([]));
    it('cancels now on request, with nothing refunded', () =>
      spec
        .given([activated()])
        .when(cancel(false))
        .then([
          {
            type: 'SubscriptionCanceled',
            data: {
              subscription_id: 'sub_1',
              reason: 'requested',
              object: {
                ...subscription,
                status: 'CANCELED',
                canceled_at: asked.toISOString(),
                updated_at: asked.toISOString(),
              },
            },
          },
        ]));
    it('ends at current_period_end, not before, once', () => {
      spec.given([activated(), pending]).when(endPeriod('2026-02-28T09:59:59.999Z')).then([]);
      const ended: SubscriptionEvent = {
        type: 'SubscriptionCanceled',
        data: {
          subscription_id: 'sub_1',
          reason: 'period_end',
          object: {
            ...canceling,
            status: 'CANCELED',
            cancel_at_period_end: false,
            updated_at: subscription.current_period_end,
          },
        },
      };
      spec.given([activated(), pending]).when(endPeriod('2026-02-28T10:00:00.000Z')).then([ended]);
      spec.given([activated(), pending, ended]).when(endPeriod('2026-03-01T00:00:00.000Z')).then([]);
    });
    it('does not end a subscription that is not canceling', () =>
      spec.given([activated()]).when(endPeriod('2026-03-01T00:00:00.000Z')).then([]));
    it('resumes a pending cancellation, and changes nothing without one', () => {
      const resumed: SubscriptionEvent = {
        type: 'SubscriptionUpdated',
        data: { subscription_id: 'sub_1', object: { ...canceling, cancel_at_period_end: false, canceled_at: null } },
      };
      spec.given([activated(), pending]).when(resume).then([resumed]);
      spec.given([activated()]).when(resume).then([]);
    });
    it('refuses to cancel or resume a canceled subscription, and another tenant', () => {
      const gone = activated({ status: 'CANCELED', canceled_at: at.toISOString() });
      spec.given([gone]).when(cancel(true)).thenThrows('canceled already');
      spec.given([gone]).when(resume).thenThrows('canceled already');
      spec
        .given([activated()])
        .when({ type: 'CancelSubscription', data: { ...who, organization: 'org_2', atPeriodEnd: true } })
        .thenThrows('No such subscription');
    });
  });

  describe('when a renewal is paid or fails', () => {
    const renew = (periodStart: string): SubscriptionCommand => ({
      type: 'RenewPaid',
      data: { subscriptionId: 'sub_1', periodStart, invoiceId: 'in_2', now: new Date(periodStart) },
    });
    it('enters the next period counted from the anchor: 31 Jan, 28 Feb, then 31 Mar', () => {
      spec
        .given([activated()])
        .when(renew('2026-02-28T10:00:00.000Z'))
        .then([
          {
            type: 'SubscriptionRenewed',
            data: {
              subscription_id: 'sub_1',
              invoice_id: 'in_2',
              object: {
                ...subscription,
                current_period_start: '2026-02-28T10:00:00.000Z',
                current_period_end: '2026-03-31T10:00:00.000Z',
                updated_at: '2026-02-28T10:00:00.000Z',
              },
            },
          },
        ]);
    });
    it("starts billing usage from the new period once the renewal that billed it is paid (a switch's usage_since is done with)", () => {
      const prices = [{ meter: 'api_calls', unit_amount: 1, package_size: 100 }];
      const switched = activated({ metered_prices: prices, usage_since: '2026-01-15T10:00:00.000Z' });
      const [renewed] = subscriptionAggregate.decide(
        renew('2026-02-28T10:00:00.000Z'),
        subscriptionAggregate.evolve(subscriptionAggregate.initialState(), switched),
      );
      expect(renewed!.data).toMatchObject({
        object: { metered_prices: prices, usage_since: null, current_period_start: '2026-02-28T10:00:00.000Z' },
      });
    });
    it('moves only the period the invoice was for (a repeat changes nothing)', () =>
      spec.given([activated()]).when(renew('2026-03-31T10:00:00.000Z')).then([]));
    it('goes PAST_DUE once, and a paid retry makes it ACTIVE in the next period', () => {
      const pastDue: SubscriptionEvent = {
        type: 'SubscriptionPastDue',
        data: {
          subscription_id: 'sub_1',
          invoice_id: 'in_2',
          object: { ...subscription, status: 'PAST_DUE', updated_at: at.toISOString() },
        },
      };
      const markPastDue: SubscriptionCommand = {
        type: 'MarkPastDue',
        data: { subscriptionId: 'sub_1', invoiceId: 'in_2', now: at },
      };
      spec.given([activated()]).when(markPastDue).then([pastDue]);
      spec.given([activated(), pastDue]).when(markPastDue).then([]);
      spec
        .given([activated(), pastDue])
        .when(renew('2026-02-28T10:00:00.000Z'))
        .then([
          expect.objectContaining({
            type: 'SubscriptionRenewed',
            data: expect.objectContaining({ object: expect.objectContaining({ status: 'ACTIVE' }) }),
          }),
        ]);
    });
    it('is canceled for non-payment after the last retry, once', () => {
      const cancel: SubscriptionCommand = { type: 'CancelForNonPayment', data: { subscriptionId: 'sub_1', now: at } };
      spec
        .given([activated()])
        .when(cancel)
        .then([
          expect.objectContaining({
            type: 'SubscriptionCanceled',
            data: expect.objectContaining({ reason: 'payment_failed' }),
          }),
        ]);
      spec
        .given([activated({ status: 'CANCELED' })])
        .when(cancel)
        .then([]);
    });
  });
});

describe('subscription.trial_will_end', () => {
  const trialing = activated({
    status: 'TRIAL',
    trial_end: '2026-02-14T10:00:00.000Z',
    current_period_end: '2026-02-14T10:00:00.000Z',
  });
  const tell = (now: string): SubscriptionCommand => ({
    type: 'TellTrialWillEnd',
    data: { subscriptionId: 'sub_1', now: new Date(now) },
  });
  const told: SubscriptionEvent = {
    type: 'SubscriptionTrialWillEnd',
    data: {
      subscription_id: 'sub_1',
      trial_end: '2026-02-14T10:00:00.000Z',
      object: (trialing.data as { object: Subscription }).object,
    },
  };

  it('is sent 3 days before trial_end, not earlier', () => {
    spec.given([trialing]).when(tell('2026-02-11T09:59:59.999Z')).then([]);
    spec.given([trialing]).when(tell('2026-02-11T10:00:00.000Z')).then([told]);
  });
  it('is sent once per trial: a second claim, or one after the trial ended, records nothing', () => {
    spec.given([trialing, told]).when(tell('2026-02-12T10:00:00.000Z')).then([]);
    spec.given([trialing]).when(tell('2026-02-14T10:00:00.000Z')).then([]);
  });
  it('is not sent for a subscription not in TRIAL', () =>
    spec.given([activated()]).when(tell('2026-02-27T10:00:00.000Z')).then([]));
  it('is sent at once with the start of a trial shorter than 3 days (as Stripe)', () => {
    const events = subscriptionAggregate.decide(
      { ...start(), data: { ...(start().data as object), trialDays: 2 } } as SubscriptionCommand,
      subscriptionAggregate.initialState(),
    );
    expect(events.map((e) => e.type)).toEqual(['SubscriptionActivated', 'SubscriptionTrialWillEnd']);
    expect(events[1]!.data).toMatchObject({ trial_end: '2026-02-02T10:00:00.000Z' });
    const long = subscriptionAggregate.decide(
      { ...start(), data: { ...(start().data as object), trialDays: 14 } } as SubscriptionCommand,
      subscriptionAggregate.initialState(),
    );
    expect(long.map((e) => e.type)).toEqual(['SubscriptionActivated']);
  });
});

describe('subscription.renewal_upcoming', () => {
  const yearly = (fields: Partial<Subscription> = {}) =>
    activated({
      status: 'ACTIVE',
      interval: 'year',
      current_period_start: '2026-01-31T10:00:00.000Z',
      current_period_end: '2027-01-31T10:00:00.000Z',
      ...fields,
    });
  const tell = (now: string): SubscriptionCommand => ({
    type: 'TellRenewalUpcoming',
    data: { subscriptionId: 'sub_1', now: new Date(now) },
  });
  const told: SubscriptionEvent = {
    type: 'SubscriptionRenewalUpcoming',
    data: {
      subscription_id: 'sub_1',
      renews_at: '2027-01-31T10:00:00.000Z',
      object: (yearly().data as { object: Subscription }).object,
    },
  };

  it('is sent 7 days before a yearly period ends, not earlier', () => {
    spec.given([yearly()]).when(tell('2027-01-24T09:59:59.999Z')).then([]);
    spec.given([yearly()]).when(tell('2027-01-24T10:00:00.000Z')).then([told]);
  });
  it('is sent once per period, and not once the period has ended', () => {
    spec.given([yearly(), told]).when(tell('2027-01-25T10:00:00.000Z')).then([]);
    spec.given([yearly()]).when(tell('2027-01-31T10:00:00.000Z')).then([]);
  });
  it('is not sent for a monthly subscription, one that is canceling, or one not ACTIVE', () => {
    spec
      .given([yearly({ interval: 'month' })])
      .when(tell('2027-01-25T10:00:00.000Z'))
      .then([]);
    spec
      .given([yearly({ cancel_at_period_end: true })])
      .when(tell('2027-01-25T10:00:00.000Z'))
      .then([]);
    spec
      .given([yearly({ status: 'PAST_DUE' })])
      .when(tell('2027-01-25T10:00:00.000Z'))
      .then([]);
  });
});
