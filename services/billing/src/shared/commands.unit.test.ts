import { customerAggregate } from '../customers/aggregate';
import type { CustomerCommand } from '../customers/decide';
import { inSequence } from './commands';

const at = new Date('2026-01-01T00:00:00.000Z');
const who = { customerId: 'cus_1', organization: 'org_1', environment: 'SANDBOX' as const, now: at };
const commands: CustomerCommand[] = [
  {
    type: 'CreateCustomer',
    data: { ...who, email: 'ada@example.com', name: 'Ada', externalId: null, externalIdTakenBy: null },
  },
  { type: 'RecordOrder', data: { ...who, orderId: 'ord_1', checkoutSessionId: 'cs_1' } },
  // The same order again: decided on the state the first one left, so it counts once.
  { type: 'RecordOrder', data: { ...who, orderId: 'ord_1', checkoutSessionId: 'cs_1' } },
];

/** One command at a time, each appended (here: folded) before the next is decided. */
function oneByOne(list: CustomerCommand[]) {
  let state = customerAggregate.initialState();
  return list.flatMap((command) => {
    const events = customerAggregate.decide(command, state);
    state = events.reduce((s, e) => customerAggregate.evolve(s, e), state);
    return events;
  });
}

describe('inSequence', () => {
  it('decides each command on the state the ones before it lead to, as one by one would', () => {
    const events = inSequence(customerAggregate).decide(commands, customerAggregate.initialState());
    expect(events.map((e) => e.type)).toEqual(['CustomerCreated', 'CustomerOrderRecorded']);
    expect(events).toEqual(oneByOne(commands));
  });

  it('throws the first refusal, deciding nothing', () => {
    const recordFirst = [commands[1]!, commands[0]!];
    expect(() => inSequence(customerAggregate).decide(recordFirst, customerAggregate.initialState())).toThrow();
  });
});
