import { groupSpendKey, groupsOf, singleSpendKey } from './credit-spends';
import { creditsOf } from './intake';

const event = (id: string, customer: string, state: string, key: string | null = null) => ({
  organization: 'org_1',
  environment: 'SANDBOX' as const,
  id,
  customer_id: customer,
  credits: '10',
  credits_state: state as 'pending',
  spend_key: key,
  received_at: new Date(0),
  occurred_at: new Date(0),
});

describe('the credits a usage event spends', () => {
  it('are its units times the credits per unit on a sum meter, the credits per unit on a count meter, none without', () => {
    expect(creditsOf({ aggregation: 'sum', credits_per_unit: 3 }, 7)).toBe(21);
    expect(creditsOf({ aggregation: 'count', credits_per_unit: 3 }, 7)).toBe(3);
    expect(creditsOf({ aggregation: 'sum', credits_per_unit: 3 }, 0)).toBe(0);
    expect(creditsOf({ aggregation: 'sum', credits_per_unit: null }, 7)).toBeNull();
  });
});

describe('the spends of claimed usage events', () => {
  it('given pending events of two customers, makes one group per customer, without a key yet', () => {
    const groups = groupsOf([
      event('e1', 'cus_a', 'pending'),
      event('e2', 'cus_b', 'pending'),
      event('e3', 'cus_a', 'pending'),
    ]);
    expect(groups.map((g) => [g.customerId, g.key, g.single, g.events.map((e) => e.id)])).toEqual([
      ['cus_a', null, false, ['e1', 'e3']],
      ['cus_b', null, false, ['e2']],
    ]);
  });

  it('given events a cut-off pass left, keeps each under the key it had: its group, or its own', () => {
    const groups = groupsOf([
      event('e1', 'cus_a', 'spending', groupSpendKey('e1')),
      event('e2', 'cus_a', 'spending', groupSpendKey('e1')),
      event('e3', 'cus_a', 'single', singleSpendKey('e3')),
      event('e4', 'cus_a', 'single', singleSpendKey('e4')),
      event('e5', 'cus_a', 'pending'),
    ]);
    expect(groups.map((g) => [g.key, g.single, g.events.map((e) => e.id)])).toEqual([
      ['usage_events:e1', false, ['e1', 'e2']],
      ['usage_event:e3', true, ['e3']],
      ['usage_event:e4', true, ['e4']],
      [null, false, ['e5']],
    ]);
  });
});
