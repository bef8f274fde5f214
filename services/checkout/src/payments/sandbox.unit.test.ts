import type { ChargeRequest } from './processor';
import { SandboxProcessor, TEST_CARDS, isExpired, luhnValid, memoryChargeLedger, parseExpiry } from './sandbox';

const now = new Date('2026-06-15T00:00:00.000Z');
const request = (number: string, fields: Partial<ChargeRequest> = {}): ChargeRequest => ({
  idempotencyKey: `k_${Math.random()}`,
  environment: 'SANDBOX',
  amount: 300,
  card: { number, exp: '12/30', cvc: '123' },
  now,
  ...fields,
});

describe('Sandbox processor', () => {
  const processor = new SandboxProcessor({ allowProduction: false });

  it.each([
    [TEST_CARDS.genericDecline, 'card_declined'],
    [TEST_CARDS.insufficientFunds, 'insufficient_funds'],
    [TEST_CARDS.expiredCard, 'expired_card'],
    ['4242424242424241', 'incorrect_number'],
  ])('declines %s with %s', async (number, code) => {
    expect(await processor.charge(request(number))).toMatchObject({ status: 'declined', code });
  });

  it('charges the success card, with any future expiry and any CVC of 3 or 4 digits', async () => {
    for (const [exp, cvc] of [
      ['06/26', '000'],
      ['12/99', '9999'],
    ] as const) {
      expect(
        await processor.charge(request(TEST_CARDS.success, { card: { number: TEST_CARDS.success, exp, cvc } })),
      ).toEqual({
        status: 'succeeded',
        payment_method: expect.objectContaining({ brand: 'visa', last4: '4242' }),
      });
    }
  });

  it('declines an expiry before the current month on the injected clock, and a bad CVC', async () => {
    const card = (exp: string, cvc = '123') => ({ number: TEST_CARDS.success, exp, cvc });
    expect(await processor.charge(request('', { card: card('05/26') }))).toMatchObject({ code: 'invalid_expiry' });
    expect(await processor.charge(request('', { card: card('13/30') }))).toMatchObject({ code: 'invalid_expiry' });
    expect(await processor.charge(request('', { card: card('12/30', '12') }))).toMatchObject({ code: 'incorrect_cvc' });
  });

  it('asks for a challenge on 4000000000003220, then charges when it passes and declines when it fails', async () => {
    expect(await processor.charge(request(TEST_CARDS.challenge))).toEqual({
      status: 'requires_action',
      next_action: { type: 'challenge' },
    });
    expect(await processor.charge(request(TEST_CARDS.challenge, { challenge: 'pass' }))).toMatchObject({
      status: 'succeeded',
    });
    expect(await processor.charge(request(TEST_CARDS.challenge, { challenge: 'fail' }))).toMatchObject({
      status: 'declined',
      code: 'authentication_failed',
    });
  });

  it('answers the same attempt the same way: one charge per idempotency key', async () => {
    const first = await processor.charge(request(TEST_CARDS.success, { idempotencyKey: 'same' }));
    const again = await processor.charge(request(TEST_CARDS.genericDecline, { idempotencyKey: 'same' }));
    expect(again).toEqual(first);
  });

  it('keeps answers in its ledger: after a restart the same key gets the first charge, and lookup tells it', async () => {
    const ledger = memoryChargeLedger();
    const before = new SandboxProcessor({ allowProduction: false, ledger });
    expect(await before.lookup('pi_1-1')).toBeNull();
    const first = await before.charge(request(TEST_CARDS.success, { idempotencyKey: 'pi_1-1', amount: 300 }));
    const restarted = new SandboxProcessor({ allowProduction: false, ledger });
    expect(await restarted.lookup('pi_1-1')).toEqual(first);
    expect(await restarted.charge(request(TEST_CARDS.insufficientFunds, { idempotencyKey: 'pi_1-1' }))).toEqual(first);
  });

  it('remembers no challenge: the answer to it is a new question', async () => {
    await processor.charge(request(TEST_CARDS.challenge, { idempotencyKey: 'challenged' }));
    expect(await processor.lookup('challenged')).toBeNull();
  });

  it('saves the card under a reference that charges later: 4242 succeeds, 0341 is declined, once per key', async () => {
    const savedOf = async (number: string) => {
      const paid = await processor.charge(request(number));
      if (paid.status !== 'succeeded') throw new Error(`${number} was not charged`);
      expect(paid.payment_method.id).toMatch(/^pm_sandbox_/);
      expect(paid.payment_method.id).not.toContain(number.slice(0, 12));
      return paid.payment_method.id;
    };
    const later = (paymentMethodId: string, idempotencyKey: string) =>
      processor.chargeSavedCard({ idempotencyKey, environment: 'SANDBOX', amount: 299, paymentMethodId, now });
    const good = await savedOf(TEST_CARDS.success);
    expect(await later(good, 'in_1:1')).toEqual({
      status: 'succeeded',
      payment_method: { id: good, brand: 'visa', last4: '4242', exp_month: 12, exp_year: 2030 },
    });
    const declining = await savedOf(TEST_CARDS.attachThenDecline);
    expect(await later(declining, 'in_2:1')).toMatchObject({ status: 'declined', code: 'card_declined' });
    expect(await later(declining, 'in_2:1')).toMatchObject({ status: 'declined' });
    expect(await later('pm_made_up', 'in_3:1')).toMatchObject({ status: 'declined', code: 'payment_method_unknown' });
  });

  it('charges many saved cards at once, each key once, answering in order (a key asked again gets its first answer)', async () => {
    const ok = 'pm_sandbox_ok_4242_122030_abc';
    const declines = 'pm_sandbox_declines_0341_122030_abc';
    const ask = (paymentMethodId: string, idempotencyKey: string) => ({
      idempotencyKey,
      environment: 'SANDBOX' as const,
      amount: 299,
      paymentMethodId,
      now,
    });
    await processor.chargeSavedCard(ask(declines, 'in_b1:1'));
    const results = await processor.chargeSavedCards([
      ask(ok, 'in_b2:1'),
      ask(ok, 'in_b1:1'), // answered before: declined, whatever card is named now
      ask(declines, 'in_b3:1'),
      ask(ok, 'in_b2:1'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['succeeded', 'declined', 'declined', 'succeeded']);
    expect(await processor.lookup('in_b2:1')).toMatchObject({ status: 'succeeded' });
    expect(await processor.chargeSavedCard(ask(declines, 'in_b2:1'))).toMatchObject({ status: 'succeeded' });
  });

  it('refuses Production unless configured for a demo', () => {
    expect(processor.refusal('SANDBOX')).toBeNull();
    expect(processor.refusal('PRODUCTION')).toMatch(/real payment processor/);
    expect(new SandboxProcessor({ allowProduction: true }).refusal('PRODUCTION')).toBeNull();
  });
});

describe('card checks', () => {
  it('Luhn', () => {
    expect(Object.values(TEST_CARDS).every(luhnValid)).toBe(true);
    expect(luhnValid('4242424242424243')).toBe(false);
  });
  it('expiry is valid through the last day of its month', () => {
    const june = parseExpiry('06/26')!;
    expect(isExpired(june, new Date('2026-06-30T23:59:59.999Z'))).toBe(false);
    expect(isExpired(june, new Date('2026-07-01T00:00:00.000Z'))).toBe(true);
    expect(parseExpiry('6/26')).toBeNull();
  });
});

describe('the sandbox card form (embedded checkouts)', () => {
  const processor = new SandboxProcessor({ allowProduction: false });
  const now = new Date('2026-11-23T00:00:00.000Z');
  const collect = (number: string, exp = '12/34', cvc = '123') => processor.collect({ number, exp, cvc }, now);
  const chargeCollected = async (number: string, key: string) => {
    const collected = collect(number);
    if (collected.status !== 'collected') throw new Error('not collected');
    return processor.charge({ idempotencyKey: key, environment: 'SANDBOX', amount: 100, card: collected.card, now });
  };

  it('keeps how a card answers, its brand, last four and expiry, never its number or CVC', () => {
    const collected = collect('4000 0000 0000 0002');
    expect(collected).toEqual({
      status: 'collected',
      card: { behaviour: 'card_declined', brand: 'visa', last4: '0002', exp_month: 12, exp_year: 2034 },
    });
    expect(JSON.stringify(collected)).not.toContain('4000000000000002');
  });

  it('refuses what a charge would refuse at once: a bad number, a past expiry, a bad CVC', () => {
    expect(collect('4242424242424241')).toMatchObject({ status: 'declined', code: 'incorrect_number' });
    expect(collect('4242424242424242', '01/20')).toMatchObject({ status: 'declined', code: 'invalid_expiry' });
    expect(collect('4242424242424242', '12/34', '12')).toMatchObject({ status: 'declined', code: 'incorrect_cvc' });
  });

  it('charges a collected card as its number would have been charged', async () => {
    expect(await chargeCollected('4242424242424242', 'cf-1')).toMatchObject({
      status: 'succeeded',
      payment_method: { id: expect.stringMatching(/^pm_sandbox_ok_4242_122034_/), last4: '4242' },
    });
    expect(await chargeCollected('4000000000009995', 'cf-2')).toMatchObject({
      status: 'declined',
      code: 'insufficient_funds',
    });
    expect(await chargeCollected('4000000000003220', 'cf-3')).toMatchObject({ status: 'requires_action' });
    expect(await chargeCollected('4000000000000341', 'cf-4')).toMatchObject({
      status: 'succeeded',
      payment_method: { id: expect.stringMatching(/^pm_sandbox_declines_/) },
    });
  });
});
