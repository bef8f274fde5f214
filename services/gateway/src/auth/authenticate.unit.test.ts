import type { SqlExecutor } from '@billing/eventstore';
import type { IncomingMessage } from 'node:http';
import { ApiKeyAuthenticator } from './authenticate';

const KEY = `sk_test_${'a'.repeat(32)}`;
const request = { headers: { authorization: `Bearer ${KEY}` } } as IncomingMessage;
const row = { id: 'key_1', organization_id: 'org_1', environment: 'SANDBOX', kind: 'secret' };

/** A database whose answers the test releases one by one, and the clock the cache reads. */
function setUp(ttlMs = 1000) {
  const pending: { resolve: (rows: unknown[]) => void; reject: (error: Error) => void }[] = [];
  const sql = {
    query: () =>
      new Promise((resolve, reject) => {
        pending.push({ resolve: (rows) => resolve({ rows }), reject });
      }),
  } as unknown as SqlExecutor;
  const clock = { now: 0 };
  const authenticator = new ApiKeyAuthenticator(sql, 'gateway', ttlMs, () => clock.now);
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  /** The key cached at 0, then asked for at 600: its refresh is on its way, not answered. */
  const refreshing = async () => {
    const first = authenticator.authenticate(request);
    pending.shift()!.resolve([row]);
    await first;
    clock.now = 600;
    authenticator.cached(request);
  };
  return { pending, clock, authenticator, settle, refreshing };
}

describe('ApiKeyAuthenticator', () => {
  it('looks a key in use up again in the background past half its entry: no request waits', async () => {
    const { pending, clock, authenticator, settle } = setUp();
    const first = authenticator.authenticate(request);
    pending.shift()!.resolve([row]);
    expect((await first).organization).toBe('org_1');

    clock.now = 499;
    expect(authenticator.cached(request)?.keyId).toBe('key_1');
    expect(pending).toHaveLength(0);

    clock.now = 500;
    expect(authenticator.cached(request)?.keyId).toBe('key_1');
    expect(await authenticator.authenticate(request)).toMatchObject({ keyId: 'key_1' });
    expect(pending).toHaveLength(1); // one lookup for both

    clock.now = 700;
    pending.shift()!.resolve([row]);
    await settle();
    // The first entry expired at 1000; the new one, looked up from 500, lasts to 1500 and is
    // itself looked up again from 1000.
    clock.now = 999;
    expect(authenticator.cached(request)?.keyId).toBe('key_1');
    expect(pending).toHaveLength(0);
    clock.now = 1499;
    expect(authenticator.cached(request)?.keyId).toBe('key_1');
    expect(pending).toHaveLength(1);
  });

  it('never trusts an entry past its time, even while its refresh is pending', async () => {
    const { pending, clock, authenticator } = setUp();
    const first = authenticator.authenticate(request);
    pending.shift()!.resolve([row]);
    await first;
    clock.now = 600;
    authenticator.cached(request); // starts the refresh, which does not answer
    clock.now = 1000;
    expect(authenticator.cached(request)).toBeUndefined();
    const waiting = authenticator.authenticate(request); // joins the pending lookup
    expect(pending).toHaveLength(1);
    pending.shift()!.resolve([]);
    await expect(waiting).rejects.toMatchObject({ status: 401 });
  });

  it('drops the entry when the refresh no longer finds the key', async () => {
    const { pending, authenticator, settle, refreshing } = setUp();
    await refreshing();
    pending.shift()!.resolve([]);
    await settle();
    expect(authenticator.cached(request)).toBeUndefined();
  });

  it('does not cache a refresh that a change overtook', async () => {
    const { pending, authenticator, settle, refreshing } = setUp();
    await refreshing();
    authenticator.forget();
    pending.shift()!.resolve([row]);
    await settle();
    expect(authenticator.cached(request)).toBeUndefined();
  });

  it('a failed refresh leaves the entry to expire, and the next lookup reports the failure', async () => {
    const { pending, clock, authenticator, settle, refreshing } = setUp();
    await refreshing();
    pending.shift()!.reject(new Error('database down'));
    await settle();
    expect(authenticator.cached(request)?.keyId).toBe('key_1');
    clock.now = 1000;
    const failing = authenticator.authenticate(request);
    pending.shift()!.reject(new Error('database down'));
    await expect(failing).rejects.toThrow('database down');
  });
});
