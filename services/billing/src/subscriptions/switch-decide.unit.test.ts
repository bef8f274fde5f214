import type { Subscription } from '@billing/contracts';
import { ApiError } from '@billing/contracts';
import { switchingAggregate } from './aggregate';
import type { SubscriptionEvent, SubscriptionState } from './subscription';
import type { SwitchingCommand } from './switch-decide';
import { basic, business, subscription } from '../../test/switching-fixtures';

const now = new Date('2026-04-10T12:00:00.000Z');
const who = { subscriptionId: 'sub_1', organization: 'org_1', environment: 'SANDBOX' as const, now };
const periodStart = subscription.current_period_start;

const activated: SubscriptionEvent = {
  type: 'SubscriptionActivated',
  data: {
    subscription_id: 'sub_1',
    organization: 'org_1',
    environment: 'SANDBOX',
    checkout_session_id: 'cs_1',
    order_id: null,
    object: subscription,
  },
};
const fold = (events: SubscriptionEvent[]): SubscriptionState =>
  events.reduce(switchingAggregate.evolve, switchingAggregate.initialState());
/** Decides on `history`, then on what it appended: the history after. */
function run(history: SubscriptionEvent[], command: SwitchingCommand) {
  const events = switchingAggregate.decide(command, fold(history));
  return { events, history: [...history, ...events] };
}
const errorOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error('did not throw');
};

describe('switching decider', () => {
  const start: SwitchingCommand = {
    type: 'StartSwitch',
    data: {
      ...who,
      switchId: 'sw_1',
      invoiceId: 'in_1',
      target: business,
      amount: 400,
      periodStart,
      recording: { lines: [], amount_discount: 0, balance_change: 0 },
      heldAt: new Date('2026-11-26T08:00:00.000Z'),
    },
  };

  it('holds the subscription, then switches it into a new period and releases it', () => {
    const held = run([activated], start);
    expect(held.events.map((e) => e.type)).toEqual(['SubscriptionSwitchStarted']);
    expect(held.events[0]!.data).toMatchObject({ held_at: '2026-11-26T08:00:00.000Z' });
    const done = run(held.history, {
      type: 'SwitchPlanNow',
      data: { ...who, switchId: 'sw_1', target: business, newPeriod: true, periodStart },
    });
    expect(done.events.map((e) => e.type)).toEqual(['SubscriptionUpdated', 'SubscriptionSwitchEnded']);
    const updated = done.events[0]!.data as { object: Subscription; previous_attributes: Record<string, unknown> };
    expect(updated.object).toMatchObject({
      product: { id: 'prod_biz', name: 'Business', slug: 'biz' },
      price: 599,
      current_period_start: '2026-04-10T12:00:00.000Z',
      current_period_end: '2026-05-10T12:00:00.000Z',
      billing_cycle_anchor: '2026-04-10T12:00:00.000Z',
    });
    expect(updated.previous_attributes).toEqual({
      product: subscription.product,
      price: 299,
      current_period_start: subscription.current_period_start,
      current_period_end: subscription.current_period_end,
      billing_cycle_anchor: subscription.billing_cycle_anchor,
    });
    const state = fold(done.history);
    expect(state.status === 'Existing' && state.switching).toBeNull();
  });

  it('refuses a second switch while one holds the subscription (409 switch_in_progress)', () => {
    const held = run([activated], start);
    const error = errorOf(() => run(held.history, { ...start, data: { ...start.data, switchId: 'sw_2' } }));
    expect([error.status, error.details]).toEqual([
      409,
      [{ blocking_reason: 'switch_in_progress', switch_id: 'sw_1' }],
    ]);
  });

  it('a declined switch releases the hold and changes nothing else', () => {
    const held = run([activated], start);
    const failed = run(held.history, {
      type: 'FailSwitch',
      data: { ...who, switchId: 'sw_1', failure: { code: 'card_declined', message: 'Your card was declined.' } },
    });
    expect(failed.events.map((e) => e.type)).toEqual(['SubscriptionSwitchEnded']);
    const state = fold(failed.history);
    expect(state.status === 'Existing' && [state.subscription, state.switching]).toEqual([subscription, null]);
    // Another FailSwitch of the same switch changes nothing.
    expect(
      run(failed.history, {
        type: 'FailSwitch',
        data: { ...who, switchId: 'sw_1', failure: { code: 'x', message: 'x' } },
      }).events,
    ).toEqual([]);
  });

  it('refuses a switch computed for a period that has ended or renewed (409 renewing)', () => {
    const late = { ...start, data: { ...start.data, now: new Date('2026-05-01T00:00:00.000Z') } };
    expect(errorOf(() => run([activated], late)).details).toEqual([{ blocking_reason: 'renewing' }]);
    const stale = { ...start, data: { ...start.data, periodStart: '2026-03-01T00:00:00.000Z' } };
    expect(errorOf(() => run([activated], stale)).status).toBe(409);
  });

  it('refuses PAST_DUE, canceled and canceling subscriptions, and absent ones (404)', () => {
    for (const [fields, reason] of [
      [{ status: 'PAST_DUE' }, 'past_due'],
      [{ status: 'CANCELED' }, 'canceled'],
      [{ cancel_at_period_end: true }, 'cancel_at_period_end'],
    ] as const) {
      const history: SubscriptionEvent[] = [
        { ...activated, data: { ...activated.data, object: { ...subscription, ...fields } } } as SubscriptionEvent,
      ];
      expect(errorOf(() => run(history, start)).details).toEqual([{ blocking_reason: reason }]);
    }
    expect(errorOf(() => run([], start)).status).toBe(404);
    expect(errorOf(() => run([activated], { ...start, data: { ...start.data, organization: 'org_2' } })).status).toBe(
      404,
    );
  });

  const schedule: SwitchingCommand = {
    type: 'ScheduleSwitch',
    data: { ...who, scheduleId: 'sub_sched_1', target: basic, switchType: 'DOWNGRADE', periodStart },
  };

  it('schedules one switch for the period end; a second is 409 naming the pending one', () => {
    const scheduled = run([activated], schedule);
    expect(scheduled.events[0]).toMatchObject({
      type: 'SubscriptionScheduleCreated',
      data: {
        object: {
          id: 'sub_sched_1',
          status: 'pending',
          effective_date: '2026-05-01T00:00:00.000Z',
          target_product_id: 'prod_basic',
        },
      },
    });
    const error = errorOf(() =>
      run(scheduled.history, { ...schedule, data: { ...schedule.data, scheduleId: 'sub_sched_2' } }),
    );
    expect(error.status).toBe(409);
    expect(error.message).toContain('sub_sched_1');
    expect(error.details).toEqual([{ blocking_reason: 'pending_schedule', schedule_id: 'sub_sched_1' }]);
  });

  it('cancels the pending schedule; none pending is 404', () => {
    const scheduled = run([activated], schedule);
    const canceled = run(scheduled.history, { type: 'CancelSchedule', data: who });
    expect(canceled.events[0]).toMatchObject({
      type: 'SubscriptionScheduleCanceled',
      data: { object: { status: 'canceled', canceled_at: now.toISOString() } },
    });
    expect(errorOf(() => run(canceled.history, { type: 'CancelSchedule', data: who })).status).toBe(404);
  });

  it('applies the schedule at its effective date: the new plan, counted from then; not before', () => {
    const scheduled = run([activated], schedule);
    const early = new Date('2026-04-30T23:59:59.000Z');
    expect(
      run(scheduled.history, { type: 'ApplySchedule', data: { subscriptionId: 'sub_1', now: early } }).events,
    ).toEqual([]);
    const at = new Date('2026-05-01T00:00:00.000Z');
    const applied = run(scheduled.history, { type: 'ApplySchedule', data: { subscriptionId: 'sub_1', now: at } });
    expect(applied.events.map((e) => e.type)).toEqual(['SubscriptionUpdated', 'SubscriptionScheduleCompleted']);
    expect((applied.events[0]!.data as { object: Subscription }).object).toMatchObject({
      price: 199,
      product: { id: 'prod_basic' },
      current_period_end: '2026-05-01T00:00:00.000Z',
      billing_cycle_anchor: '2026-05-01T00:00:00.000Z',
    });
    expect(run(applied.history, { type: 'ApplySchedule', data: { subscriptionId: 'sub_1', now: at } }).events).toEqual(
      [],
    );
  });

  it('cancels the schedule instead when the subscription is canceling at its effective date', () => {
    const canceling: SubscriptionEvent = {
      type: 'SubscriptionUpdated',
      data: { subscription_id: 'sub_1', object: { ...subscription, cancel_at_period_end: true } },
    };
    const scheduled = run([activated], schedule);
    const at = new Date('2026-05-01T00:00:00.000Z');
    const applied = run([...scheduled.history, canceling], {
      type: 'ApplySchedule',
      data: { subscriptionId: 'sub_1', now: at },
    });
    expect(applied.events.map((e) => e.type)).toEqual(['SubscriptionScheduleCanceled']);
  });

  it("takes the new plan's metered prices; a switch into a new period leaves the ended period's usage to the next renewal", () => {
    const metered = { ...subscription, metered_prices: [{ meter: 'api_calls', unit_amount: 1, package_size: 100 }] };
    const history: SubscriptionEvent[] = [
      { ...activated, data: { ...activated.data, object: metered } } as SubscriptionEvent,
    ];
    const target = { ...business, metered_prices: [{ meter: 'api_calls', unit_amount: 2, package_size: 100 }] };
    const moved = run(history, {
      type: 'SwitchPlanNow',
      data: { ...who, switchId: null, target, newPeriod: true, periodStart },
    });
    const object = (moved.events[0]!.data as { object: Subscription }).object;
    expect(object.metered_prices).toEqual(target.metered_prices);
    // The renewal that ends the new period bills the usage from the old period's start.
    expect(object.usage_since).toBe(subscription.current_period_start);
    expect(object.current_period_start).toBe(now.toISOString());
    // A second switch into a new period keeps where the unbilled usage starts.
    const again = run(moved.history, {
      type: 'SwitchPlanNow',
      data: { ...who, switchId: null, target: business, newPeriod: true, periodStart: object.current_period_start },
    });
    const after = (again.events[0]!.data as { object: Subscription }).object;
    expect(after).toMatchObject({ usage_since: subscription.current_period_start, metered_prices: null });
    // A plan without metered prices, switched to one without: no usage field at all.
    const plain = run([activated], {
      type: 'SwitchPlanNow',
      data: { ...who, switchId: null, target: business, newPeriod: true, periodStart },
    });
    const plainObject = (plain.events[0]!.data as { object: Subscription }).object;
    expect('usage_since' in plainObject || 'metered_prices' in plainObject).toBe(false);
  });

  it('changes the plan now keeping the period (crossgrade, trial, none)', () => {
    const swapped = run([activated], {
      type: 'SwitchPlanNow',
      data: { ...who, switchId: null, target: { ...business, price: 299 }, newPeriod: false, periodStart },
    });
    expect(swapped.events.map((e) => e.type)).toEqual(['SubscriptionUpdated']);
    const data = swapped.events[0]!.data as { object: Subscription; previous_attributes: Record<string, unknown> };
    expect(data.object.current_period_end).toBe(subscription.current_period_end);
    expect(data.previous_attributes).toEqual({ product: subscription.product });
  });
});
