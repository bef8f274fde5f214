import { ApiError } from '@billing/contracts';
import { creditsAggregate } from './aggregate';
import type { LedgerSettings } from './decide';
import { type Ledger, type SpendOrder, decideAll } from './spend-batches';

const customerId = 'cus_1';
const tenant = { organization: 'org_1', environment: 'SANDBOX' as const };
const at = new Date('2026-03-01T00:00:00.000Z');
const off: LedgerSettings = { livemode: false, lowBalanceThreshold: null };
const terms = { now: at, settings: off };

/** The ledger after a grant of `amount`, at version 1. */
function ledgerWith(amount: number): Ledger {
  const events = creditsAggregate.decide(
    {
      type: 'GrantCredits',
      data: {
        customerId,
        now: at,
        grantId: 'cgr_1',
        amount,
        source: 'manual',
        sourceId: null,
        reason: 'test',
        priority: 0,
        expiresAt: null,
        idempotencyKey: null,
        ...off,
      },
    },
    creditsAggregate.initialState(),
  );
  return { state: events.reduce(creditsAggregate.evolve, creditsAggregate.initialState()), version: 1, snapshotAt: 0 };
}

const spend = (amount: number, key: string): SpendOrder => ({
  tenant,
  customerId,
  request: { amount, idempotencyKey: key, metadata: null },
});

describe('decideAll (a batch of spends)', () => {
  it('decides in arrival order on the ledger the earlier spends left, each with its own answer', () => {
    // Given a ledger holding 20 credits
    const ledgers = new Map([[creditsAggregate.stream(customerId), ledgerWith(20)]]);
    // When a batch brings 18 spends of 1, the first key again (past the ledger's 16-key window),
    // a spend of 5 with 2 left, a spend whose customer was not found, and the first key with another amount
    const batch = [
      ...Array.from({ length: 18 }, (_, i) => spend(1, `k-${i}`)),
      spend(1, 'k-0'),
      spend(5, 'big'),
      spend(1, 'lost'),
      spend(2, 'k-0'),
    ];
    const notFound = new ApiError(404, 'resource_not_found', 'No such customer: cus_1');
    const batchTerms = batch.map((_, i) => (i === 20 ? { error: notFound } : terms));
    const { outcomes, changes } = decideAll(batch, batchTerms, new Map(), ledgers);

    // Then the 18 are spent down to 2, the repeat answers the first spend, and the rest are refused alone
    const spent = outcomes.slice(0, 18).map((outcome) => ('spend' in outcome ? outcome.spend.balance_after : null));
    expect(spent).toEqual(Array.from({ length: 18 }, (_, i) => 19 - i));
    expect(outcomes[18]).toEqual(outcomes[0]);
    expect((outcomes[19] as { error: ApiError }).error.code).toBe('insufficient_credits');
    expect(outcomes[20]).toEqual({ error: notFound });
    expect((outcomes[21] as { error: ApiError }).error.code).toBe('idempotency_key_mismatch');
    const change = changes.get(creditsAggregate.stream(customerId))!;
    expect(change.events.map((event) => event.type)).toEqual(Array(18).fill('CreditsSpent'));
    expect(change.state.balance).toBe(2);
    expect(change.ledger.version).toBe(1);
  });

  it('answers a key spent before the batch from its earlier spend, and changes no ledger', () => {
    // Given a key already spent (read from credit_spend_keys)
    const ledgers = new Map([[creditsAggregate.stream(customerId), ledgerWith(5)]]);
    const first = { spend_id: 'cspd_1', amount: 3, metadata: null, balance_after: 2, spent_at: at.toISOString() };
    const earlier = new Map([[`${customerId}\u0000paid`, first]]);
    // When it comes again
    const { outcomes, changes } = decideAll([spend(3, 'paid')], [terms], earlier, ledgers);
    // Then it answers that spend and nothing is written
    expect(outcomes).toEqual([{ spend: first }]);
    expect(changes.size).toBe(0);
  });
});
