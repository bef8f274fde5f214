import { type FailureBlame, IsolatedBreaker } from './isolated-breaker';

class Failure extends Error {
  constructor(readonly blame: FailureBlame) {
    super(`failed (${blame})`);
  }
}

/** An action that fails as told for a caller, or succeeds. */
function breakerWith(
  failFor: Map<string, FailureBlame>,
  options: { minFailingCallers?: number; maxCallers?: number } = {},
) {
  const calls: string[] = [];
  const breaker = new IsolatedBreaker<[string], string>(
    async (caller) => {
      calls.push(caller);
      const blame = failFor.get(caller);
      if (blame) throw new Failure(blame);
      return `ok ${caller}`;
    },
    {
      name: 'catalog',
      blame: (error) => (error instanceof Failure ? error.blame : 'caller'),
      resetTimeout: 60_000,
      errorThresholdPercentage: 50,
      volumeThreshold: 5,
      rollingCountTimeout: 10_000,
      rollingCountBuckets: 10,
      ...options,
    },
  );
  const fire = (caller: string) =>
    breaker.fire(caller, caller).catch((error: { code?: string; message: string }) => error.code ?? error.message);
  return { breaker, calls, fire };
}

describe('IsolatedBreaker', () => {
  const shutdown: (() => void)[] = [];
  afterEach(() => shutdown.splice(0).forEach((stop) => stop()));
  const make = (...args: Parameters<typeof breakerWith>) => {
    const made = breakerWith(...args);
    shutdown.push(() => made.breaker.shutdown());
    return made;
  };

  it("opens only the failing caller's breaker; the others keep going through", async () => {
    const { breaker, calls, fire } = make(new Map([['hostile', 'caller' as const]]));
    const victim: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      await fire('hostile');
      victim.push(await fire('victim'));
    }
    expect(victim).toEqual(Array(40).fill('ok victim'));
    expect(breaker.callerBreaker('hostile')?.opened).toBe(true);
    expect(breaker.callerBreaker('victim')?.opened).toBe(false);
    expect(breaker.upstream.opened).toBe(false);
    expect(breaker.upstream.stats.failures).toBe(0);
    // Open, the hostile caller no longer reaches the upstream.
    expect(calls.filter((caller) => caller === 'hostile')).toHaveLength(5);
    expect(await fire('hostile')).toBe('EOPENBREAKER');
  });

  it('opens for everyone when the upstream cannot be reached, whoever calls', async () => {
    const failFor = new Map<string, FailureBlame>([['first', 'upstream']]);
    const { breaker, calls, fire } = make(failFor);
    for (let i = 0; i < 5; i++) expect(await fire('first')).toBe('failed (upstream)');
    expect(breaker.upstream.opened).toBe(true);
    calls.length = 0;
    expect(await fire('newcomer')).toBe('EOPENBREAKER');
    expect(calls).toEqual([]);
  });

  it('opens at once when calls cannot reach the upstream, however many succeeded before', async () => {
    const failFor = new Map<string, FailureBlame>();
    const { breaker, fire } = make(failFor);
    for (let i = 0; i < 50; i++) await fire('busy');
    failFor.set('busy', 'upstream');
    for (let i = 0; i < 5; i++) expect(await fire('busy')).toBe('failed (upstream)');
    expect(breaker.upstream.opened).toBe(true);
    expect(await fire('other')).toBe('EOPENBREAKER');
  });

  it('opens for everyone when several callers fail at once, and not for fewer than minFailingCallers', async () => {
    const failFor = new Map<string, FailureBlame>([
      ['a', 'caller'],
      ['b', 'caller'],
    ]);
    const { breaker, calls, fire } = make(failFor);
    for (let i = 0; i < 10; i++) {
      await fire('a');
      await fire('b');
    }
    expect(breaker.failingCallers).toBe(2);
    expect(breaker.upstream.stats.failures).toBe(0);
    expect(breaker.upstream.opened).toBe(false);
    // The upstream fails for everyone (it hangs, say): failures now count against it, and it opens.
    const everyone = ['c', 'd', 'e', 'f', 'g', 'h'];
    for (const caller of everyone) failFor.set(caller, 'caller');
    for (let round = 0; round < 5 && !breaker.upstream.opened; round++)
      for (const caller of everyone) await fire(caller);
    expect(breaker.failingCallers).toBeGreaterThanOrEqual(3);
    expect(breaker.upstream.opened).toBe(true);
    calls.length = 0;
    expect(await fire('newcomer')).toBe('EOPENBREAKER');
    expect(calls).toEqual([]);
  });

  it('does not count failing callers that are few among many succeeding ones', async () => {
    const failFor = new Map<string, FailureBlame>(['a', 'b', 'c'].map((caller) => [caller, 'caller'] as const));
    const { breaker, fire } = make(failFor);
    for (let i = 0; i < 10; i++) await fire(`good-${i}`);
    for (let i = 0; i < 10; i++) for (const caller of ['a', 'b', 'c']) await fire(caller);
    expect(breaker.failingCallers).toBe(3);
    expect(breaker.upstream.stats.failures).toBe(0);
    expect(breaker.upstream.opened).toBe(false);
    expect(await fire('good-0')).toBe('ok good-0');
  });

  it("does not hold failures blamed on no one against anyone, nor the upstream's rejections against a caller", async () => {
    const failFor = new Map<string, FailureBlame>([['quiet', 'none']]);
    const { breaker, fire } = make(failFor);
    for (let i = 0; i < 10; i++) expect(await fire('quiet')).toBe('failed (none)');
    expect(breaker.callerBreaker('quiet')?.stats.failures).toBe(0);
    expect(breaker.upstream.stats.failures).toBe(0);

    breaker.upstream.open();
    for (let i = 0; i < 10; i++) expect(await fire('bystander')).toBe('EOPENBREAKER');
    expect(breaker.callerBreaker('bystander')?.stats.failures).toBe(0);
    expect(breaker.callerBreaker('bystander')?.opened).toBe(false);
  });

  it('keeps at most maxCallers caller breakers, dropping the least recently used', async () => {
    const { breaker, fire } = make(new Map(), { maxCallers: 3 });
    for (const caller of ['a', 'b', 'c']) await fire(caller);
    await fire('a');
    await fire('d');
    expect(['a', 'b', 'c', 'd'].map((caller) => breaker.callerBreaker(caller) !== undefined)).toEqual([
      true,
      false,
      true,
      true,
    ]);
  });

  it('rejects every call after shutdown', async () => {
    const { breaker, fire } = make(new Map());
    breaker.shutdown();
    expect(await fire('a')).toBe('ESHUTDOWN');
  });
});
