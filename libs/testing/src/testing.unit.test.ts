import { deciderSpec } from './decider-spec';
import { eventually, uniqueName } from './servers';

type Counter = { total: number };
type CounterCommand = { type: 'Add'; amount: number };
type CounterEvent = { type: 'Added'; amount: number };

const counter = deciderSpec<Counter, CounterCommand, CounterEvent>({
  initialState: () => ({ total: 0 }),
  evolve: (state, event) => ({ total: state.total + event.amount }),
  decide: (command, state) => {
    if (state.total + command.amount > 10) throw new Error('over the limit');
    return [{ type: 'Added', amount: command.amount }];
  },
});

describe('deciderSpec', () => {
  it('folds the given events before deciding', () => {
    counter
      .given([{ type: 'Added', amount: 4 }])
      .when({ type: 'Add', amount: 6 })
      .then([{ type: 'Added', amount: 6 }]);
  });

  it('reports a rejected command', () => {
    counter
      .given([{ type: 'Added', amount: 8 }])
      .when({ type: 'Add', amount: 3 })
      .thenThrows('over the limit');
  });

  it('fails when the decision differs from the expectation', () => {
    expect(() => counter.given([]).when({ type: 'Add', amount: 1 }).then([])).toThrow();
  });
});

describe('helpers', () => {
  it('eventually retries until the check passes, and rethrows after the timeout', async () => {
    let calls = 0;
    await expect(eventually(() => ++calls >= 3 || Promise.reject(new Error('not yet')), 1000, 1)).resolves.toBe(true);
    await expect(eventually(() => Promise.reject(new Error('never')), 30, 5)).rejects.toThrow('never');
  });

  it('makes SQL-safe unique names', () => {
    const name = uniqueName('bus');
    expect(name).toMatch(/^bus_[a-z0-9_]+$/);
    expect(uniqueName('bus')).not.toBe(name);
  });
});
