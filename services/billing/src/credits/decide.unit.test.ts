import { ApiError, type CreditLedgerEntry } from '@billing/contracts';
import { deciderSpec } from '@billing/testing';
import { creditsAggregate } from './aggregate';
import type { CreditsCommand, GrantCredits, LedgerSettings } from './decide';
import { type CreditsEvent, RECENT_SPEND_KEYS } from './ledger';

const spec = deciderSpec(creditsAggregate);
const customerId = 'cus_1';
const at = new Date('2026-03-01T00:00:00.000Z');
const day = (n: number) => new Date(at.getTime() + n * 86_400_000);
/** A Sandbox customer of an organization with no low-balance threshold. */
const off: LedgerSettings = { livemode: false, lowBalanceThreshold: null };

/** The ledger entry an event carries as `object`: `fields` as the ledger API shows them. */
const entry = (fields: Partial<CreditLedgerEntry> & Pick<CreditLedgerEntry, 'id' | 'type' | 'amount'>) => ({
  object: 'credit_ledger_entry' as const,
  balance_after: 0,
  grant_id: null,
  drawn_from: [],
  reason: null,
  metadata: null,
  created_at: at.toISOString(),
  livemode: false,
  ...fields,
});

type GrantFields = Partial<GrantCredits['data']> & { balance?: number };
const grant = (id: string, amount: number, fields: GrantFields = {}): CreditsCommand => ({
  type: 'GrantCredits',
  data: {
    customerId,
    now: at,
    grantId: id,
    amount,
    source: 'manual',
    sourceId: null,
    reason: 'goodwill',
    priority: 0,
    expiresAt: null,
    idempotencyKey: null,
    ...off,
    ...fields,
  },
});
/** The event of `grant(id, amount, fields)` with the balance after it. */
const granted = (id: string, amount: number, balance: number, fields: GrantFields = {}): CreditsEvent => {
  const { data } = grant(id, amount, fields) as GrantCredits;
  return {
    type: 'CreditsGranted',
    data: {
      customer_id: customerId,
      grant_id: id,
      amount,
      source: data.source,
      source_id: data.sourceId,
      reason: data.reason,
      priority: data.priority,
      expires_at: data.expiresAt?.toISOString() ?? null,
      idempotency_key: data.idempotencyKey,
      balance_after: balance,
      granted_at: data.now.toISOString(),
      object: entry({
        id,
        type: 'grant',
        amount,
        balance_after: balance,
        grant_id: id,
        reason: data.reason,
        created_at: data.now.toISOString(),
      }),
      balance,
    },
  };
};
const spend = (
  amount: number,
  key = 'k1',
  now = at,
  metadata: Record<string, string> | null = null,
  settings: LedgerSettings = off,
): CreditsCommand => ({
  type: 'SpendCredits',
  data: { customerId, now, spendId: `cspd_${key}`, amount, idempotencyKey: key, metadata, ...settings },
});
const spent = (
  amount: number,
  drawn: Array<[string, number]>,
  balance: number,
  key = 'k1',
  now = at,
  metadata: Record<string, string> | null = null,
): CreditsEvent => ({
  type: 'CreditsSpent',
  data: {
    customer_id: customerId,
    spend_id: `cspd_${key}`,
    amount,
    drawn_from: drawn.map(([grant_id, n]) => ({ grant_id, amount: n })),
    idempotency_key: key,
    metadata,
    balance_after: balance,
    spent_at: now.toISOString(),
    object: entry({
      id: `cspd_${key}`,
      type: 'spend',
      amount: -amount,
      balance_after: balance,
      drawn_from: drawn.map(([grant_id, n]) => ({ grant_id, amount: n })),
      metadata,
      created_at: now.toISOString(),
    }),
    balance,
  },
});
const expired = (grantId: string, amount: number, balance: number, expiresAt: Date): CreditsEvent => ({
  type: 'CreditsExpired',
  data: {
    customer_id: customerId,
    grant_id: grantId,
    amount,
    balance_after: balance,
    expired_at: expiresAt.toISOString(),
    object: entry({
      id: `cexp_${grantId.replace(/^cgr_/, '')}`,
      type: 'expiry',
      amount: -amount,
      balance_after: balance,
      grant_id: grantId,
      created_at: expiresAt.toISOString(),
    }),
    balance,
  },
});
const adjust = (amount: number, now = at, settings: LedgerSettings = off): CreditsCommand => ({
  type: 'AdjustCredits',
  data: { customerId, now, adjustmentId: 'cadj_1', amount, reason: 'refund', ...settings },
});
const expire = (now: Date, settings: LedgerSettings = off): CreditsCommand => ({
  type: 'ExpireCredits',
  data: { customerId, now, ...settings },
});

describe('Credits', () => {
  describe('granting', () => {
    it('adds to the balance', () =>
      spec
        .given([granted('cgr_a', 10, 10)])
        .when(grant('cgr_b', 5))
        .then([granted('cgr_b', 5, 15)]));
    it('grants once per idempotency key', () =>
      spec
        .given([granted('cgr_a', 10, 10, { idempotencyKey: 'order:ord_1' })])
        .when(grant('cgr_b', 10, { idempotencyKey: 'order:ord_1' }))
        .then([]));
    it('refuses an expiry at or before now with validation_error', () =>
      spec
        .given([])
        .when(grant('cgr_a', 10, { expiresAt: at }))
        .thenThrows('expires_at must be later'));
    it('expires what is due first', () =>
      spec
        .given([granted('cgr_a', 10, 10, { expiresAt: day(1) })])
        .when(grant('cgr_b', 5, { now: day(1) }))
        .then([expired('cgr_a', 10, 0, day(1)), granted('cgr_b', 5, 5, { now: day(1) })]));
  });

  describe('spending', () => {
    it('draws from one grant and answers the balance after', () =>
      spec
        .given([granted('cgr_a', 10, 10)])
        .when(spend(3))
        .then([spent(3, [['cgr_a', 3]], 7)]));
    it('may spend the whole balance', () =>
      spec
        .given([granted('cgr_a', 10, 10)])
        .when(spend(10))
        .then([spent(10, [['cgr_a', 10]], 0)]));
    it('refuses more than the balance with 402 insufficient_credits and the balance in details', () => {
      const state = creditsAggregate.fold([]);
      const given = [granted('cgr_a', 10, 10)].reduce(creditsAggregate.evolve, state);
      try {
        creditsAggregate.decide(spend(11), given);
        throw new Error('not refused');
      } catch (error) {
        expect(error).toBeInstanceOf(ApiError);
        expect(error).toMatchObject({ status: 402, code: 'insufficient_credits' });
        expect((error as ApiError).details).toEqual([expect.objectContaining({ balance: 10 })]);
      }
    });
    it('refuses any spend with no grants', () => spec.given([]).when(spend(1)).thenThrows('The balance is 0'));

    it('burns the soonest expiry first, never-expiring last', () =>
      spec
        .given([
          granted('cgr_never', 5, 5),
          granted('cgr_late', 5, 10, { expiresAt: day(20) }),
          granted('cgr_soon', 5, 15, { expiresAt: day(10) }),
        ])
        .when(spend(12))
        .then([
          spent(
            12,
            [
              ['cgr_soon', 5],
              ['cgr_late', 5],
              ['cgr_never', 2],
            ],
            3,
          ),
        ]));
    it('burns higher priority first among equal expiries, then the older grant', () =>
      spec
        .given([
          granted('cgr_old', 5, 5, { expiresAt: day(10) }),
          granted('cgr_new', 5, 10, { expiresAt: day(10) }),
          granted('cgr_high', 5, 15, { expiresAt: day(10), priority: 9 }),
        ])
        .when(spend(8))
        .then([
          spent(
            8,
            [
              ['cgr_high', 5],
              ['cgr_old', 3],
            ],
            7,
          ),
        ]));
    it('continues from what earlier spends left', () =>
      spec
        .given([granted('cgr_a', 5, 5), granted('cgr_b', 5, 10), spent(4, [['cgr_a', 4]], 6, 'k0')])
        .when(spend(3))
        .then([
          spent(
            3,
            [
              ['cgr_a', 1],
              ['cgr_b', 2],
            ],
            3,
          ),
        ]));
  });

  describe('a repeated idempotency key', () => {
    const history = [granted('cgr_a', 10, 10), spent(3, [['cgr_a', 3]], 7, 'k1', at, { order: '1' })];
    it('appends nothing', () =>
      spec
        .given(history)
        .when(spend(3, 'k1', day(1), { order: '1' }))
        .then([]));
    it('keeps the original spend in the state for the answer', () => {
      const state = history.reduce(creditsAggregate.evolve, creditsAggregate.initialState());
      expect(state.spends.k1).toEqual({
        spend_id: 'cspd_k1',
        amount: 3,
        metadata: { order: '1' },
        balance_after: 7,
        spent_at: at.toISOString(),
      });
    });
    it('with another amount is idempotency_key_mismatch', () =>
      spec
        .given(history)
        .when(spend(4, 'k1', at, { order: '1' }))
        .thenThrows(/another amount/));
    it('with other metadata is idempotency_key_mismatch', () =>
      spec
        .given(history)
        .when(spend(3, 'k1', at, { order: '2' }))
        .thenThrows(/another amount or metadata/));
    it('is not refused for want of credits later', () =>
      spec
        .given([...history, spent(7, [['cgr_a', 7]], 0, 'k2')])
        .when(spend(3, 'k1', at, { order: '1' }))
        .then([]));
  });

  describe('a key older than the state keeps (read from credit_spend_keys)', () => {
    const many = Array.from({ length: RECENT_SPEND_KEYS + 4 }, (_, i) =>
      spent(1, [['cgr_a', 1]], 100 - (i + 1), `old-${i}`),
    );
    const history = [granted('cgr_a', 100, 100), ...many];
    const earlier = {
      spend_id: 'cspd_old-0',
      amount: 1,
      metadata: null,
      balance_after: 99,
      spent_at: at.toISOString(),
    };
    const again = (amount: number, found: typeof earlier | null): CreditsCommand => {
      const command = spend(amount, 'old-0') as Extract<CreditsCommand, { type: 'SpendCredits' }>;
      return { ...command, data: { ...command.data, earlier: found } };
    };
    it('the state holds only the latest keys, oldest out first', () => {
      const state = history.reduce(creditsAggregate.evolve, creditsAggregate.initialState());
      expect(Object.keys(state.spends)).toHaveLength(RECENT_SPEND_KEYS);
      expect(state.spends['old-0']).toBeUndefined();
      expect(state.spendOrder.at(-1)).toBe(`old-${RECENT_SPEND_KEYS + 3}`);
    });
    it('given the earlier spend, appends nothing', () => spec.given(history).when(again(1, earlier)).then([]));
    it('given the earlier spend with another amount, is idempotency_key_mismatch', () =>
      spec
        .given(history)
        .when(again(2, earlier))
        .thenThrows(/another amount/));
    it('without it, the state alone cannot tell: the table is what keeps the key', () =>
      spec
        .given(history)
        .when(again(1, null))
        .then([spent(1, [['cgr_a', 1]], 79, 'old-0')]));
  });

  describe('expiry', () => {
    const history = [granted('cgr_exp', 10, 10, { expiresAt: day(5) }), granted('cgr_keep', 4, 14)];
    it('is recorded by ExpireCredits at the expiry instant', () =>
      spec
        .given(history)
        .when(expire(day(5)))
        .then([expired('cgr_exp', 10, 4, day(5))]));
    it('records nothing before the expiry', () =>
      spec
        .given(history)
        .when(expire(new Date(day(5).getTime() - 1)))
        .then([]));
    it('records only what was left of a grant, once', () =>
      spec
        .given([...history, spent(6, [['cgr_exp', 6]], 8, 'k0'), expired('cgr_exp', 4, 4, day(5))])
        .when(expire(day(9)))
        .then([]));
    it('comes before a spend in the same append: an expired grant is never spent', () =>
      spec
        .given(history)
        .when(spend(4, 'k1', day(6)))
        .then([expired('cgr_exp', 10, 4, day(5)), spent(4, [['cgr_keep', 4]], 0, 'k1', day(6))]));
    it('leaves a spend the expired credits would have covered refused, and appends nothing', () =>
      spec
        .given(history)
        .when(spend(5, 'k1', day(6)))
        .thenThrows('The balance is 4'));
  });

  describe('ending a grant before its expiry (a plan switch into a new period)', () => {
    const endGrant = (key: string, now: Date): CreditsCommand => ({
      type: 'EndGrant',
      data: { customerId, now, idempotencyKey: key, ...off },
    });
    const allowance = granted('cgr_old', 100, 104, { expiresAt: day(20), idempotencyKey: 'allowance:sub_1:p1' });
    const history = [granted('cgr_keep', 4, 4), allowance, spent(30, [['cgr_old', 30]], 74)];
    it('expires what is left of the grant made with the key, now', () =>
      spec
        .given(history)
        .when(endGrant('allowance:sub_1:p1', day(3)))
        .then([expired('cgr_old', 70, 4, day(3))]));
    it('ends nothing for a key no open grant was made with, or a grant expired already', () => {
      spec
        .given(history)
        .when(endGrant('allowance:sub_1:p0', day(3)))
        .then([]);
      spec
        .given([...history, expired('cgr_old', 70, 4, day(20))])
        .when(endGrant('allowance:sub_1:p1', day(21)))
        .then([]);
    });
    it('records the grants due first, then ends the one asked', () =>
      spec
        .given([
          granted('cgr_due', 5, 5, { expiresAt: day(1) }),
          granted('cgr_old', 100, 105, { expiresAt: day(20), idempotencyKey: 'allowance:sub_1:p1' }),
        ])
        .when(endGrant('allowance:sub_1:p1', day(2)))
        .then([expired('cgr_due', 5, 100, day(1)), expired('cgr_old', 100, 0, day(2))]));
  });

  describe('taking back', () => {
    it('draws from grants in burn order', () =>
      spec
        .given([granted('cgr_a', 5, 5), granted('cgr_b', 5, 10, { expiresAt: day(3) })])
        .when(adjust(7))
        .then([
          {
            type: 'CreditsAdjusted',
            data: {
              customer_id: customerId,
              adjustment_id: 'cadj_1',
              amount: 7,
              drawn_from: [
                { grant_id: 'cgr_b', amount: 5 },
                { grant_id: 'cgr_a', amount: 2 },
              ],
              reason: 'refund',
              balance_after: 3,
              adjusted_at: at.toISOString(),
              object: entry({
                id: 'cadj_1',
                type: 'adjustment',
                amount: -7,
                balance_after: 3,
                drawn_from: [
                  { grant_id: 'cgr_b', amount: 5 },
                  { grant_id: 'cgr_a', amount: 2 },
                ],
                reason: 'refund',
              }),
              balance: 3,
            },
          },
        ]));
    it('never below zero', () =>
      spec
        .given([granted('cgr_a', 5, 5)])
        .when(adjust(6))
        .thenThrows('The balance is 5'));
    it("from one grant only (a refund's from its order's), as much as it has left, none of the others", () => {
      const fromOrder = (amount: number): CreditsCommand => ({
        type: 'AdjustCredits',
        data: {
          customerId,
          now: at,
          adjustmentId: 'cadj_1',
          amount,
          reason: 'refund',
          fromGrantKey: 'order:ord_1',
          ...off,
        },
      });
      const history = [
        granted('cgr_gift', 50, 50, { expiresAt: day(3) }),
        granted('cgr_order', 500, 550, { idempotencyKey: 'order:ord_1' }),
        spent(470, [['cgr_order', 470]], 80, 'k0'),
      ];
      const drawn = [{ grant_id: 'cgr_order', amount: 30 }];
      spec
        .given(history)
        .when(fromOrder(333))
        .then([
          {
            type: 'CreditsAdjusted',
            data: {
              customer_id: customerId,
              adjustment_id: 'cadj_1',
              amount: 30,
              drawn_from: drawn,
              reason: 'refund',
              balance_after: 50,
              adjusted_at: at.toISOString(),
              object: entry({
                id: 'cadj_1',
                type: 'adjustment',
                amount: -30,
                balance_after: 50,
                drawn_from: drawn,
                reason: 'refund',
              }),
              balance: 50,
            },
          },
        ]);
      spec
        .given([...history, spent(30, [['cgr_order', 30]], 50, 'k1')])
        .when(fromOrder(333))
        .then([]);
      spec
        .given([granted('cgr_gift', 50, 50)])
        .when(fromOrder(10))
        .then([]);
    });
  });

  describe('with an overdraft limit', () => {
    const limit10: LedgerSettings = { livemode: false, lowBalanceThreshold: null, overdraftLimit: 10 };
    const spendOf = (amount: number, key: string) => spend(amount, key, at, null, limit10);
    const overdrawn = [granted('cgr_a', 5, 5), spent(12, [['cgr_a', 5]], -7, 'k0')];

    it('a spend draws what the grants hold and takes the balance below zero for the rest', () =>
      spec
        .given([granted('cgr_a', 5, 5)])
        .when(spendOf(12, 'k0'))
        .then([spent(12, [['cgr_a', 5]], -7, 'k0')]));
    it('may reach minus the limit exactly', () =>
      spec
        .given([granted('cgr_a', 5, 5)])
        .when(spendOf(15, 'k0'))
        .then([spent(15, [['cgr_a', 5]], -10, 'k0')]));
    it('refuses a spend beyond minus the limit with 402, naming the balance', () =>
      spec
        .given([granted('cgr_a', 5, 5)])
        .when(spendOf(16, 'k0'))
        .thenThrows('The balance is 5 credits (an overdraft of at most 10 is allowed)'));
    it('spends on from a balance below zero, drawing from no grant, down to the limit', () => {
      spec
        .given(overdrawn)
        .when(spendOf(3, 'k1'))
        .then([spent(3, [], -10, 'k1')]);
      spec.given(overdrawn).when(spendOf(4, 'k1')).thenThrows('The balance is -7');
    });
    it('a limit of 0 (the default) never goes below zero', () =>
      spec
        .given([granted('cgr_a', 5, 5)])
        .when(spend(6, 'k0', at, null, { ...off, overdraftLimit: 0 }))
        .thenThrows('The balance is 5 credits; 6'));

    it('a grant while below zero repays the debt first; what is left of it burns as usual', () => {
      spec
        .given(overdrawn)
        .when(grant('cgr_b', 20))
        .then([granted('cgr_b', 20, 13)]);
      const state = [...overdrawn, granted('cgr_b', 20, 13)].reduce(
        creditsAggregate.evolve,
        creditsAggregate.initialState(),
      );
      expect(state.grants).toEqual([expect.objectContaining({ id: 'cgr_b', remaining: 13 })]);
      spec
        .given([...overdrawn, granted('cgr_b', 20, 13)])
        .when(spend(13, 'k1'))
        .then([spent(13, [['cgr_b', 13]], 0, 'k1')]);
    });
    it('a grant smaller than the debt is all repayment: nothing is left on it to spend or expire', () => {
      const history = [...overdrawn, granted('cgr_b', 5, -2, { expiresAt: day(3) })];
      const state = history.reduce(creditsAggregate.evolve, creditsAggregate.initialState());
      expect(state).toMatchObject({ grants: [], balance: -2 });
      spec
        .given(history)
        .when(expire(day(4)))
        .then([]);
      spec
        .given(history)
        .when(spendOf(8, 'k1'))
        .then([spent(8, [], -10, 'k1')]);
    });
    it('what a grant keeps after repaying expires as that grant', () =>
      spec
        .given([...overdrawn, granted('cgr_b', 20, 13, { expiresAt: day(3) })])
        .when(expire(day(3)))
        .then([expired('cgr_b', 13, 0, day(3))]));
    it('a take-back never goes below zero, whatever the limit', () => {
      spec
        .given([granted('cgr_a', 5, 5)])
        .when(adjust(6, at, limit10))
        .thenThrows('The balance is 5');
      spec
        .given(overdrawn)
        .when(adjust(1, at, limit10))
        .thenThrows('The balance is -7');
    });
  });

  describe('low balance', () => {
    const at10: LedgerSettings = { livemode: false, lowBalanceThreshold: 10 };
    const low = (balance: number, change: CreditsEvent): CreditsEvent => ({
      type: 'CreditsLowBalance',
      data: { customer_id: customerId, balance, threshold: 10, object: change.data.object! },
    });
    const spendOf = (amount: number, key: string) => spend(amount, key, at, null, at10);

    it('is appended with the spend that takes the balance from above the threshold to below it', () => {
      const spentBelow = spent(15, [['cgr_a', 15]], 5, 'k1');
      spec
        .given([granted('cgr_a', 20, 20)])
        .when(spendOf(15, 'k1'))
        .then([spentBelow, low(5, spentBelow)]);
    });
    it('is not appended while the balance stays at or above the threshold', () => {
      spec
        .given([granted('cgr_a', 20, 20)])
        .when(spendOf(5, 'k1'))
        .then([spent(5, [['cgr_a', 5]], 15, 'k1')]);
      spec
        .given([granted('cgr_a', 20, 20)])
        .when(spendOf(10, 'k1'))
        .then([spent(10, [['cgr_a', 10]], 10, 'k1')]);
    });
    it('counts a balance equal to the threshold as above it: going below from there crosses', () => {
      const spentBelow = spent(1, [['cgr_a', 1]], 9, 'k2');
      spec
        .given([granted('cgr_a', 20, 20), spent(10, [['cgr_a', 10]], 10, 'k1')])
        .when(spendOf(1, 'k2'))
        .then([spentBelow, low(9, spentBelow)]);
    });
    it('is appended once per crossing: further spends below the threshold append none', () => {
      const first = spent(15, [['cgr_a', 15]], 5, 'k1');
      spec
        .given([granted('cgr_a', 20, 20), first, low(5, first)])
        .when(spendOf(1, 'k2'))
        .then([spent(1, [['cgr_a', 1]], 4, 'k2')]);
    });
    it('is re-armed by a grant that lifts the balance back to the threshold or above', () => {
      const first = spent(15, [['cgr_a', 15]], 5, 'k1');
      const again = spent(
        6,
        [
          ['cgr_a', 5],
          ['cgr_b', 1],
        ],
        9,
        'k2',
      );
      spec
        .given([granted('cgr_a', 20, 20), first, low(5, first), granted('cgr_b', 10, 15)])
        .when(spendOf(6, 'k2'))
        .then([again, low(9, again)]);
    });
    it('is never appended with a grant that leaves the balance above, nor with the threshold off', () => {
      spec
        .given([granted('cgr_a', 5, 5)])
        .when(grant('cgr_b', 10, at10))
        .then([granted('cgr_b', 10, 15)]);
      spec
        .given([granted('cgr_a', 20, 20)])
        .when(spend(15, 'k1'))
        .then([spent(15, [['cgr_a', 15]], 5, 'k1')]);
    });
    it('is appended for a take-back or an expiry that crosses, naming that entry', () => {
      spec
        .given([granted('cgr_a', 20, 20)])
        .when(adjust(11, at, at10))
        .then([
          expect.objectContaining({ type: 'CreditsAdjusted' }),
          expect.objectContaining({
            type: 'CreditsLowBalance',
            data: expect.objectContaining({ balance: 9, object: expect.objectContaining({ id: 'cadj_1' }) }),
          }),
        ]);
      const lapsed = expired('cgr_exp', 20, 5, day(5));
      spec
        .given([granted('cgr_exp', 20, 20, { expiresAt: day(5) }), granted('cgr_keep', 5, 25)])
        .when(expire(day(5), at10))
        .then([lapsed, low(5, lapsed)]);
    });
    it('is not appended by a repeated spend key, which appends nothing', () => {
      const first = spent(15, [['cgr_a', 15]], 5, 'k1');
      spec
        .given([granted('cgr_a', 20, 20), first, low(5, first)])
        .when(spendOf(15, 'k1'))
        .then([]);
    });
  });
});
