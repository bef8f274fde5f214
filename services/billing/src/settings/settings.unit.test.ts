import { UpdateBillingSettingsBody, defaultBillingSettings } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { billingSettingsAggregate, billingSettingsOf } from './aggregate';
import type { BillingSettingsEvent, UpdateBillingSettings } from './settings';

const spec = deciderSpec(billingSettingsAggregate);
const at = new Date('2026-11-23T05:00:00.000Z');
const update = (changes: UpdateBillingSettings['data']['changes']): UpdateBillingSettings => ({
  type: 'UpdateBillingSettings',
  data: { organization: 'org_1', environment: 'SANDBOX', changes, now: at },
});
const updated = (object: ReturnType<typeof defaultBillingSettings>): BillingSettingsEvent => ({
  type: 'BillingSettingsUpdated',
  data: { organization: 'org_1', environment: 'SANDBOX', object },
});

describe('billing settings decider', () => {
  const defaults = defaultBillingSettings('org_1', 'SANDBOX');

  it('starts from the defaults: retries 3, 5, 7 then cancel; prorate upgrades now, downgrades at period end', () => {
    expect(defaults).toEqual({
      object: 'billing_settings',
      organization_id: 'org_1',
      environment: 'sandbox',
      dunning: { retry_days: [3, 5, 7], after_final_failure: 'cancel' },
      proration: { upgrade: 'prorate_now', downgrade: 'at_period_end' },
      credits_low_balance_threshold: null,
      credits_overdraft_limit: 0,
      updated_at: null,
    });
  });

  it('sets the overdraft limit, keeps it when absent, and 0 turns it off', () => {
    const set = updated({ ...defaults, credits_overdraft_limit: 500, updated_at: at.toISOString() });
    spec
      .given([])
      .when(update({ credits_overdraft_limit: 500 }))
      .then([set]);
    spec
      .given([set])
      .when(update({ credits_low_balance_threshold: null }))
      .then([]);
    spec
      .given([set])
      .when(update({ credits_overdraft_limit: 0 }))
      .then([updated({ ...defaults, updated_at: at.toISOString() })]);
  });

  it('reads a change recorded before the overdraft limit existed as no overdraft', async () => {
    const { credits_overdraft_limit: _none, ...before } = { ...defaults, updated_at: 'x' };
    const one = { readStream: async () => [updated(before as typeof defaults)] };
    expect((await billingSettingsOf(one as never, 'org_1', 'SANDBOX')).credits_overdraft_limit).toBe(0);
  });

  it('sets the low-balance threshold, keeps it when absent and turns it off with null', () => {
    const set = updated({ ...defaults, credits_low_balance_threshold: 100, updated_at: at.toISOString() });
    spec
      .given([])
      .when(update({ credits_low_balance_threshold: 100 }))
      .then([set]);
    spec
      .given([set])
      .when(update({ credits_low_balance_threshold: 100 }))
      .then([]);
    spec
      .given([set])
      .when(update({ dunning: { after_final_failure: 'past_due' } }))
      .then([
        updated({
          ...defaults,
          dunning: { retry_days: [3, 5, 7], after_final_failure: 'past_due' },
          credits_low_balance_threshold: 100,
          updated_at: at.toISOString(),
        }),
      ]);
    spec
      .given([set])
      .when(update({ credits_low_balance_threshold: null }))
      .then([updated({ ...defaults, updated_at: at.toISOString() })]);
  });

  it('reads a change recorded before the threshold existed as having none', async () => {
    const { credits_low_balance_threshold: _none, ...before } = { ...defaults, updated_at: 'x' };
    const one = { readStream: async () => [updated(before as typeof defaults)] };
    expect((await billingSettingsOf(one as never, 'org_1', 'SANDBOX')).credits_low_balance_threshold).toBeNull();
  });

  it('changes only the fields given and stamps updated_at', () => {
    spec
      .given([])
      .when(update({ dunning: { after_final_failure: 'past_due' } }))
      .then([
        updated({
          ...defaults,
          dunning: { retry_days: [3, 5, 7], after_final_failure: 'past_due' },
          updated_at: at.toISOString(),
        }),
      ]);
  });

  it('keeps earlier changes when a later one touches another section', () => {
    const first = updated({
      ...defaults,
      dunning: { retry_days: [1, 2], after_final_failure: 'cancel' },
      updated_at: 'x',
    });
    spec
      .given([first])
      .when(update({ proration: { upgrade: 'bill_at_next_renewal' } }))
      .then([
        updated({
          ...defaults,
          dunning: { retry_days: [1, 2], after_final_failure: 'cancel' },
          proration: { upgrade: 'bill_at_next_renewal', downgrade: 'at_period_end' },
          updated_at: at.toISOString(),
        }),
      ]);
  });

  it('records nothing for a change that changes nothing', () => {
    spec.given([]).when(update({})).then([]);
    spec
      .given([])
      .when(update({ dunning: { retry_days: [3, 5, 7] } }))
      .then([]);
  });

  it('reads the defaults from an empty stream and the last change otherwise', async () => {
    const none = { readStream: async () => [] };
    expect(await billingSettingsOf(none as never, 'org_1', 'SANDBOX')).toEqual(defaults);
    const changed = { ...defaults, proration: { upgrade: 'prorate_now', downgrade: 'now_with_credit' } };
    const one = { readStream: async () => [updated(changed as typeof defaults)] };
    expect((await billingSettingsOf(one as never, 'org_1', 'SANDBOX')).proration.downgrade).toBe('now_with_credit');
  });
});

describe('billing settings body', () => {
  const errors = (body: unknown) => {
    const parsed = UpdateBillingSettingsBody.safeParse(body);
    return parsed.success ? [] : parsed.error.issues.map((issue) => issue.path.join('.'));
  };

  it('takes 1 to 8 strictly increasing positive whole days, at most 60', () => {
    expect(errors({ dunning: { retry_days: [1] } })).toEqual([]);
    expect(errors({ dunning: { retry_days: [1, 2, 3, 4, 5, 6, 7, 60] } })).toEqual([]);
    for (const bad of [[], [0], [-1], [1.5], [61], [3, 3], [5, 3], [1, 2, 3, 4, 5, 6, 7, 8, 9], ['3'], null]) {
      expect([bad, errors({ dunning: { retry_days: bad } }).length > 0]).toEqual([bad, true]);
    }
  });

  it('takes a low-balance threshold of 1 to 1,000,000,000 whole credits, or null', () => {
    for (const good of [1, 500, 1_000_000_000, null]) {
      expect(errors({ credits_low_balance_threshold: good })).toEqual([]);
    }
    for (const bad of [0, -1, 1.5, '10', 1_000_000_001, true]) {
      expect([bad, errors({ credits_low_balance_threshold: bad })]).toEqual([bad, ['credits_low_balance_threshold']]);
    }
  });

  it('takes an overdraft limit of 0 to 1,000,000,000 whole credits, not null', () => {
    for (const good of [0, 1, 1_000_000_000]) expect(errors({ credits_overdraft_limit: good })).toEqual([]);
    for (const bad of [-1, 1.5, '5', null, 1_000_000_001]) {
      expect([bad, errors({ credits_overdraft_limit: bad })]).toEqual([bad, ['credits_overdraft_limit']]);
    }
  });

  it('refuses unknown fields and values', () => {
    expect(errors({ dunning: { after_final_failure: 'unpaid' } })).toEqual(['dunning.after_final_failure']);
    expect(errors({ proration: { upgrade: 'never' } })).toEqual(['proration.upgrade']);
    expect(errors({ proration: { downgrade: 'now' } })).toEqual(['proration.downgrade']);
    expect(errors({ invoicing: {} })).toEqual(['']);
    expect(errors({ dunning: { retries: [1] } })).toEqual(['dunning']);
  });
});
