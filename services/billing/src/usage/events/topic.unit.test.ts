import { readsUsageTopic } from './topic';

describe('reading the usage topic', () => {
  it('is off unless BILLING_USAGE_TOPIC is on, and any other value is refused at start', () => {
    expect(readsUsageTopic({})).toBe(false);
    expect(readsUsageTopic({ BILLING_USAGE_TOPIC: 'off' })).toBe(false);
    expect(readsUsageTopic({ BILLING_USAGE_TOPIC: 'on' })).toBe(true);
    expect(() => readsUsageTopic({ BILLING_USAGE_TOPIC: 'true' })).toThrow('BILLING_USAGE_TOPIC must be on or off');
  });
});
