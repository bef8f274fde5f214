import {
  type EinvoiceCommand,
  type EinvoiceEvent,
  type EinvoiceState,
  type RequestEinvoice,
  decide,
  evolve,
  initialState,
} from './einvoice';

const t0 = new Date('2026-11-27T02:00:00Z');
const later = (ms: number) => new Date(t0.getTime() + ms);

const requested = (overrides: Partial<RequestEinvoice['data']> = {}): RequestEinvoice => ({
  type: 'RequestEinvoice',
  data: {
    einvoiceId: 'einv_1',
    organization: 'org_1',
    environment: 'SANDBOX',
    invoiceId: 'in_1',
    orderId: null,
    customerId: 'cus_1',
    buyer: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
    contact: { email: 'ada@example.com', name: 'Ada' },
    provider: 'ecpay',
    merchantOrderNumber: 'EI1',
    taxType: 'TAXED',
    description: 'Pro 2026-11-27 - 2026-12-27',
    total: 299,
    now: t0,
    ...overrides,
  },
});

/** Given the commands so far, the state they lead to. */
function given(...commands: EinvoiceCommand[]): EinvoiceState {
  return commands.reduce((state, command) => decide(command, state).reduce(evolve, state), initialState());
}
const when = (state: EinvoiceState, command: EinvoiceCommand): EinvoiceEvent[] => decide(command, state);
const start = (at = t0): EinvoiceCommand => ({ type: 'StartAttempt', data: { now: at } });
const issued = (at = t0): EinvoiceCommand => ({
  type: 'RecordIssued',
  data: { number: 'AB12345678', randomCode: '1234', issuedAt: at, now: at },
});
const refund = (refundId: string, amount: number, at = t0): EinvoiceCommand => ({
  type: 'RecordRefund',
  data: { refundId, amount, now: at },
});
const objectOf = (events: EinvoiceEvent[]) => events.at(-1)!.data.object;

describe('an e-invoice asked for by a payment', () => {
  it('given nothing, when a payment asks, then it is pending to be issued now with a 48-hour deadline', () => {
    const events = when(initialState(), requested());
    expect(events.map((e) => e.type)).toEqual(['EinvoiceRequested']);
    expect(objectOf(events)).toMatchObject({
      status: 'pending',
      pending_action: 'issue',
      next_attempt_at: t0.toISOString(),
      deadline: '2026-11-29T02:00:00.000Z',
      sales_amount: 299,
      tax_amount: 0,
      livemode: false,
    });
  });

  it('given a company buyer, then the untaxed amount and the 5 % tax are split and the deadline is 7 days', () => {
    const events = when(
      initialState(),
      requested({ buyer: { type: 'B2B', tax_id: '04595257', company_name: 'Acme' } }),
    );
    expect(objectOf(events)).toMatchObject({ sales_amount: 285, tax_amount: 14, deadline: '2026-12-04T02:00:00.000Z' });
  });

  it('given one already asked for, when the payment is delivered again, then nothing more is asked', () => {
    expect(when(given(requested()), requested({ total: 1 }))).toEqual([]);
  });
});

describe('attempts', () => {
  it('given a pending e-invoice, when a process claims it, then the attempt is counted and leased for two minutes', () => {
    const events = when(given(requested()), start());
    expect(events.map((e) => e.type)).toEqual(['EinvoiceAttemptStarted']);
    expect(objectOf(events)).toMatchObject({ attempt_count: 1, next_attempt_at: later(120_000).toISOString() });
  });

  it('given an attempt claimed, when another process tries to claim it within the lease, then it is refused', () => {
    expect(() => when(given(requested(), start()), start(later(60_000)))).toThrow('Nothing of this e-invoice is due');
  });

  it('given an attempt that died, when its lease has passed, then another process may claim it', () => {
    expect(objectOf(when(given(requested(), start()), start(later(120_000)))).attempt_count).toBe(2);
  });

  it('given a claimed attempt, when the provider issues, then the number and random code are recorded and nothing is pending', () => {
    const events = when(given(requested(), start()), issued());
    expect(events.map((e) => e.type)).toEqual(['EinvoiceIssued']);
    expect(objectOf(events)).toMatchObject({
      status: 'issued',
      number: 'AB12345678',
      random_code: '1234',
      pending_action: null,
      next_attempt_at: null,
    });
  });

  it('given attempts failing, then each is tried again later, 1, 2, 4 minutes after, with the error shown', () => {
    const commands: EinvoiceCommand[] = [requested()];
    const waits: number[] = [];
    let now = t0;
    for (let i = 0; i < 3; i += 1) {
      commands.push(start(now), { type: 'RecordAttemptFailed', data: { code: 'ecpay_5000', message: 'down', now } });
      const state = given(...commands);
      if (state.status !== 'Existing') throw new Error('no e-invoice');
      const next = new Date(state.einvoice.next_attempt_at!);
      waits.push(next.getTime() - now.getTime());
      expect(state.einvoice.last_error).toEqual({ code: 'ecpay_5000', message: 'down' });
      now = next;
    }
    expect(waits).toEqual([60_000, 120_000, 240_000]);
  });
});

describe('the deadline monitor', () => {
  const warn = (at: Date): EinvoiceCommand => ({ type: 'WarnDeadline', data: { now: at } });

  it('given a B2C e-invoice still pending, then it warns once at 36 hours, not before', () => {
    const state = given(requested());
    expect(when(state, warn(later(36 * 3_600_000 - 1)))).toEqual([]);
    const events = when(state, warn(later(36 * 3_600_000)));
    expect(events.map((e) => e.type)).toEqual(['EinvoiceDeadlineApproaching']);
    expect(when(given(requested(), warn(later(36 * 3_600_000))), warn(later(40 * 3_600_000)))).toEqual([]);
  });

  it('given an issued e-invoice, then it never warns', () => {
    expect(when(given(requested(), start(), issued()), warn(later(47 * 3_600_000)))).toEqual([]);
  });
});

describe('refunds', () => {
  it('given an issued e-invoice, when all of it is refunded in its filing period, then it is to be voided', () => {
    const events = when(given(requested(), start(), issued()), refund('re_1', 299));
    expect(events[0]).toMatchObject({ type: 'EinvoiceRefundRecorded', data: { voids: true, amount: 299 } });
    expect(objectOf(events)).toMatchObject({ pending_action: 'void', allowances: [] });
    const voided = objectOf(
      when(given(requested(), start(), issued(), refund('re_1', 299), start()), {
        type: 'RecordVoided',
        data: { now: t0 },
      }),
    );
    expect(voided).toMatchObject({ status: 'voided', pending_action: null, voided_at: t0.toISOString() });
  });

  it('given an e-invoice issued in an earlier filing period, when all of it is refunded, then an allowance is issued instead', () => {
    const events = when(given(requested(), start(), issued()), refund('re_1', 299, new Date('2027-01-02T00:00:00Z')));
    expect(objectOf(events)).toMatchObject({
      pending_action: 'allowance',
      allowances: [{ refund_id: 're_1', amount: 299, status: 'pending', number: null }],
    });
  });

  it('given a part refunded, then an allowance of that part; the rest refunded later is another allowance, never a void', () => {
    const first = given(requested(), start(), issued(), refund('re_1', 100));
    expect(first.status === 'Existing' && first.einvoice.pending_action).toBe('allowance');
    const allowanced = given(requested(), start(), issued(), refund('re_1', 100), start(), {
      type: 'RecordAllowanceIssued',
      data: { refundId: 're_1', number: 'AL1', now: t0 },
    });
    expect(allowanced.status === 'Existing' && allowanced.einvoice).toMatchObject({
      amount_allowanced: 100,
      pending_action: null,
      allowances: [{ refund_id: 're_1', status: 'issued', number: 'AL1' }],
    });
    const rest = objectOf(when(allowanced, refund('re_2', 199)));
    expect(rest.pending_action).toBe('allowance');
    expect(rest.allowances.map((a) => [a.refund_id, a.amount, a.status])).toEqual([
      ['re_1', 100, 'issued'],
      ['re_2', 199, 'pending'],
    ]);
  });

  it('given a refund recorded, when it is delivered again or more than the rest is asked, then nothing more than was paid is given back', () => {
    const state = given(requested(), start(), issued(), refund('re_1', 200));
    expect(when(state, refund('re_1', 200))).toEqual([]);
    expect(objectOf(when(state, refund('re_2', 500))).allowances.at(-1)).toMatchObject({ amount: 99 });
  });

  it('given a refund before the e-invoice is issued, then it is issued first and voided after', () => {
    const state = given(requested(), refund('re_1', 299));
    expect(state.status === 'Existing' && state.einvoice.pending_action).toBe('issue');
    const afterIssue = objectOf(when(given(requested(), refund('re_1', 299), start()), issued()));
    expect(afterIssue).toMatchObject({ status: 'issued', pending_action: 'void', next_attempt_at: t0.toISOString() });
  });
});
