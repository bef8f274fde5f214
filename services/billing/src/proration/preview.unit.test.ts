import type { ScheduledPlan } from '@billing/contracts';
import { DEFAULT_PRORATION_POLICY } from './classify';
import { type SwitchFacts, planSwitch } from './preview';
import { basic, business, subscription } from '../../test/switching-fixtures';

const yearly: ScheduledPlan = {
  id: 'prod_year',
  name: 'Pro yearly',
  slug: 'pro-y',
  price: 2990,
  interval: 'year',
  interval_count: 1,
};
const day10 = new Date('2026-04-10T12:00:00.000Z');
const facts = (fields: Partial<SwitchFacts> = {}): SwitchFacts => ({
  subscription,
  target: business,
  paid: 299,
  charge: 599,
  now: day10,
  policy: DEFAULT_PRORATION_POLICY,
  blockingReason: null,
  hasPaymentMethod: true,
  ...fields,
});

describe('planSwitch', () => {
  it('previews the upgrade of 299 to 599 on day 10 of 30: net 400 now, a new period from now', () => {
    const { preview, treatment, chargeNow, balanceChange } = planSwitch(facts());
    expect(treatment).toBe('prorate');
    expect([chargeNow, balanceChange]).toEqual([400, 0]);
    expect(preview).toEqual({
      object: 'switch_preview',
      subscription_id: 'sub_1',
      switch_type: 'UPGRADE',
      execution_mode: 'immediate',
      current_plan: {
        product_id: 'prod_pro',
        product_name: 'Pro',
        amount: 299,
        currency: 'TWD',
        interval: 'month',
        interval_count: 1,
        monthly_equivalent: 299,
      },
      new_plan: {
        product_id: 'prod_biz',
        product_name: 'Business',
        amount: 599,
        currency: 'TWD',
        interval: 'month',
        interval_count: 1,
        monthly_equivalent: 599,
      },
      proration: {
        credit_amount: 199,
        charge_amount: 599,
        net_amount: 400,
        unused_days: 20,
        total_days_in_period: 30,
        credit_description: 'Unused time on Pro: 20 of 30 days of 299 TWD paid',
      },
      effective_date: '2026-04-10T12:00:00.000Z',
      next_billing_date: '2026-05-10T12:00:00.000Z',
      proration_behavior: 'create_prorations',
      requires_payment: true,
      can_proceed: true,
      blocking_reason: null,
      is_in_trial: false,
      trial_end: null,
    });
  });

  it('schedules a downgrade for the end of the period, with no proration', () => {
    const { preview } = planSwitch(facts({ target: basic, charge: 199 }));
    expect(preview).toMatchObject({
      switch_type: 'DOWNGRADE',
      execution_mode: 'scheduled',
      proration: null,
      effective_date: '2026-05-01T00:00:00.000Z',
      next_billing_date: '2026-05-01T00:00:00.000Z',
      proration_behavior: 'none',
      requires_payment: false,
    });
  });

  it('a downgrade now with credit puts the negative net on the balance', () => {
    const subscriptionOn599 = { ...subscription, price: 599 };
    const { preview, chargeNow, balanceChange } = planSwitch(
      facts({
        subscription: subscriptionOn599,
        target: basic,
        paid: 599,
        charge: 199,
        policy: { ...DEFAULT_PRORATION_POLICY, downgrade: 'now_with_credit' },
      }),
    );
    expect(preview.proration).toMatchObject({ credit_amount: 399, charge_amount: 199, net_amount: -200 });
    expect([chargeNow, balanceChange, preview.requires_payment]).toEqual([0, 200, false]);
  });

  it('an upgrade billed at the next renewal owes the unused days difference', () => {
    const { preview, chargeNow, balanceChange } = planSwitch(
      facts({ policy: { ...DEFAULT_PRORATION_POLICY, upgrade: 'bill_at_next_renewal' } }),
    );
    expect(preview.execution_mode).toBe('immediate');
    expect(preview.proration).toMatchObject({ credit_amount: 199, charge_amount: 399, net_amount: 200 });
    expect(preview.next_billing_date).toBe('2026-05-01T00:00:00.000Z');
    expect([chargeNow, balanceChange, preview.requires_payment]).toEqual([0, -200, false]);
  });

  it('month to year is prorated now; year to month is scheduled', () => {
    const up = planSwitch(facts({ target: yearly, charge: 2990 }));
    expect(up.preview).toMatchObject({ switch_type: 'PERIOD_CHANGE', execution_mode: 'immediate' });
    expect(up.preview.proration).toMatchObject({ credit_amount: 199, charge_amount: 2990, net_amount: 2791 });
    expect(up.preview.next_billing_date).toBe('2027-04-10T12:00:00.000Z');
    const onYear = {
      ...subscription,
      price: 2990,
      interval: 'year' as const,
      current_period_end: '2027-04-01T00:00:00.000Z',
    };
    const target = { ...business, price: 299 };
    const down = planSwitch(facts({ subscription: onYear, target, charge: 299, paid: 2990 }));
    expect(down.preview).toMatchObject({
      switch_type: 'PERIOD_CHANGE',
      execution_mode: 'scheduled',
      proration: null,
      effective_date: '2027-04-01T00:00:00.000Z',
    });
  });

  it('a crossgrade changes now and charges nothing', () => {
    const { preview, chargeNow } = planSwitch(facts({ target: { ...business, price: 299 }, charge: 299 }));
    expect(preview).toMatchObject({ switch_type: 'CROSSGRADE', execution_mode: 'immediate', proration: null });
    expect(preview.next_billing_date).toBe(subscription.current_period_end);
    expect([chargeNow, preview.requires_payment]).toEqual([0, false]);
  });

  it('a trial switches now, charges nothing and keeps trial_end', () => {
    const trial = { ...subscription, status: 'TRIAL' as const, trial_end: '2026-05-01T00:00:00.000Z' };
    const { preview, chargeNow } = planSwitch(facts({ subscription: trial, paid: 0 }));
    expect(preview).toMatchObject({
      switch_type: 'UPGRADE',
      execution_mode: 'immediate',
      proration: null,
      requires_payment: false,
      is_in_trial: true,
      trial_end: '2026-05-01T00:00:00.000Z',
      next_billing_date: '2026-05-01T00:00:00.000Z',
    });
    expect(chargeNow).toBe(0);
  });

  it('cannot proceed when blocked, or when it must charge and there is no card', () => {
    expect(planSwitch(facts({ blockingReason: 'past_due' })).preview).toMatchObject({
      can_proceed: false,
      blocking_reason: 'past_due',
    });
    expect(planSwitch(facts({ hasPaymentMethod: false })).preview).toMatchObject({
      can_proceed: false,
      blocking_reason: 'no_payment_method',
    });
    expect(planSwitch(facts({ hasPaymentMethod: false, target: basic, charge: 199 })).preview.can_proceed).toBe(true);
  });
});
