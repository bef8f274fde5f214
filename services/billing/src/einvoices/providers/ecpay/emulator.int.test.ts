import { type AllowanceRequest, EinvoiceUnanswered, type IssueRequest } from '../port';
import { type EcpayEinvoiceProvider, ecpayEinvoiceProvider } from './client';
import { type EcpayEinvoiceEmulator, startEcpayEinvoiceEmulator } from './emulator';
import { ECPAY_EINVOICE_PATHS, ECPAY_EINVOICE_STAGE_MERCHANT, taipeiDate } from './merchant';
import { smokeEcpayEinvoice } from './smoke';

describe('ECPay e-invoice client against the emulator, over HTTP', () => {
  const clock = new Date('2026-11-26T16:30:00Z');
  let emulator: EcpayEinvoiceEmulator;
  let provider: EcpayEinvoiceProvider;
  let orders = 0;

  beforeAll(async () => {
    emulator = await startEcpayEinvoiceEmulator(ECPAY_EINVOICE_STAGE_MERCHANT, () => clock);
    provider = ecpayEinvoiceProvider({ ...ECPAY_EINVOICE_STAGE_MERCHANT, baseUrl: emulator.url });
  });
  afterAll(() => emulator.close());

  const sale = (total = 299, change: Partial<IssueRequest> = {}): IssueRequest => ({
    merchantOrderNo: `ORDER${++orders}`,
    buyer: { kind: 'member' },
    contact: { email: 'buyer@example.com', name: null },
    taxType: 'taxed',
    items: [{ description: 'Pro 月方案', quantity: 1, unitPrice: total, amount: total }],
    total,
    salesAmount: total,
    taxAmount: 0,
    ...change,
  });
  const issued = async (request: IssueRequest) => {
    const outcome = await provider.issue(request, clock);
    if (outcome.status !== 'issued') throw new Error(`refused ${outcome.code}: ${outcome.message}`);
    return outcome;
  };
  const refundOf = (
    invoice: { invoiceNumber: string; issuedAt: Date },
    total: number,
    known: string[] = [],
  ): AllowanceRequest => ({
    invoiceNumber: invoice.invoiceNumber,
    issuedAt: invoice.issuedAt,
    allowanceKey: `refund${total}`,
    knownAllowanceNumbers: known,
    buyer: { kind: 'member' },
    contact: { email: 'buyer@example.com', name: null },
    taxType: 'taxed',
    items: [{ description: 'Pro 月方案', quantity: 1, unitPrice: total, amount: total }],
    total,
    salesAmount: total,
    taxAmount: 0,
  });

  it('issues, and GetIssue by RelateNumber finds the same invoice, in Taiwan time', async () => {
    const request = sale();
    const invoice = await issued(request);
    expect(invoice.invoiceNumber).toMatch(/^AB\d{8}$/);
    expect(invoice.randomCode).toMatch(/^\d{4}$/);
    expect(invoice.issuedAt).toEqual(clock);
    expect(emulator.invoices.get(request.merchantOrderNo)).toMatchObject({
      invoiceNumber: invoice.invoiceNumber,
      total: 299,
    });
    const { status: _, ...held } = invoice;
    expect(await provider.query(request.merchantOrderNo, clock)).toEqual({ ...held, voided: false });
    expect(await provider.query('NEVERUSED', clock)).toBeNull();
  });

  it('a RelateNumber issued twice (in any case) is one invoice: ECPay refuses it and the client answers the one it holds', async () => {
    const request = sale();
    const first = await issued(request);
    expect(await provider.issue(request, clock)).toEqual(first);
    expect(await provider.issue({ ...request, merchantOrderNo: request.merchantOrderNo.toLowerCase() }, clock)).toEqual(
      first,
    );
    expect([...emulator.invoices.values()].filter((i) => i.invoiceNumber === first.invoiceNumber)).toHaveLength(1);
  });

  it.each(['drop', 'http500'] as const)(
    'an answer lost after ECPay issued (%s) is unanswered; the query then finds it, and issuing again answers it',
    async (how) => {
      const request = sale();
      emulator.failNext(ECPAY_EINVOICE_PATHS.issue, how);
      await expect(provider.issue(request, clock)).rejects.toThrow(EinvoiceUnanswered);
      const held = emulator.invoices.get(request.merchantOrderNo)!;
      expect(held).toBeDefined();
      const queried = await provider.query(request.merchantOrderNo, clock);
      expect(queried).toMatchObject({ invoiceNumber: held.invoiceNumber, randomCode: held.randomCode, voided: false });
      expect(await provider.issue(request, clock)).toMatchObject({
        status: 'issued',
        invoiceNumber: held.invoiceNumber,
      });
    },
  );

  it('a refusal is a refusal, nothing issued; the query of an order ECPay refused to answer is unanswered', async () => {
    const request = sale();
    emulator.failNext(ECPAY_EINVOICE_PATHS.issue, 'refuse');
    expect(await provider.issue(request, clock)).toEqual({
      status: 'refused',
      code: 'ecpay_9000001',
      message: '呼叫財政部API失敗，請稍後再試',
    });
    expect(emulator.invoices.has(request.merchantOrderNo)).toBe(false);
    emulator.failNext(ECPAY_EINVOICE_PATHS.getIssue, 'refuse');
    await expect(provider.query(request.merchantOrderNo, clock)).rejects.toThrow('RtnCode 9000001');
    await issued(request);
  });

  it.each([
    ['a mobile barcode', { buyer: { kind: 'mobile_barcode', carrier: '/ABC+-.1' } }],
    ['a citizen certificate', { buyer: { kind: 'citizen_certificate', carrier: 'AB12345678901234' } }],
    ['a donation', { buyer: { kind: 'donation', donationCode: '168001' } }],
    [
      'a company (B2B, in the member carrier)',
      { buyer: { kind: 'company', taxId: '97025978', companyName: 'ACME' }, salesAmount: 285, taxAmount: 14 },
    ],
    ['zero-rated', { taxType: 'zero_rated' }],
    ['exempt', { taxType: 'exempt' }],
  ] as const)('issues to %s as the documents require', async (_, change) => {
    const request = sale(299, change as Partial<IssueRequest>);
    await issued(request);
    if (request.buyer.kind === 'company') {
      expect(emulator.invoices.get(request.merchantOrderNo)).toMatchObject({ salesAmount: 285, taxAmount: 14 });
    }
  });

  it.each([
    ['a mobile barcode not of / and 7 characters', { buyer: { kind: 'mobile_barcode', carrier: '/abc' } }],
    ['a tax id not of 8 digits', { buyer: { kind: 'company', taxId: '1234', companyName: 'ACME' } }],
    ['a love code of letters', { buyer: { kind: 'donation', donationCode: 'LOVE' } }],
  ] as const)('refuses %s, as the documents say ECPay does (with the emulator’s own code)', async (_, change) => {
    const request = sale(299, change as Partial<IssueRequest>);
    expect(await provider.issue(request, clock)).toMatchObject({ status: 'refused', code: 'ecpay_8888888' });
    expect(emulator.invoices.has(request.merchantOrderNo)).toBe(false);
  });

  it('voids; the query says voided; voiding again is voided; the RelateNumber is not issued again', async () => {
    const request = sale();
    const invoice = await issued(request);
    const voidRequest = { invoiceNumber: invoice.invoiceNumber, issuedAt: invoice.issuedAt, reason: 'Refunded' };
    expect(await provider.void(voidRequest, clock)).toEqual({ status: 'voided' });
    expect(emulator.invoices.get(request.merchantOrderNo)).toMatchObject({ voided: true, voidReason: 'Refunded' });
    expect(await provider.query(request.merchantOrderNo, clock)).toMatchObject({ voided: true });
    expect(await provider.void(voidRequest, clock)).toEqual({ status: 'voided' });
    expect(await provider.issue(request, clock)).toMatchObject({ status: 'refused', code: 'ecpay_5070357' });
    expect(emulator.calls.at(-3)!.fields).toMatchObject({ InvoiceDate: taipeiDate(invoice.issuedAt) });
  });

  it('allows 100 then 150 of 299; 50 more is refused (49 left); 49 is allowed; the invoice can then not be voided', async () => {
    const invoice = await issued(sale(299));
    const first = await provider.allowance(refundOf(invoice, 100), clock);
    expect(first).toMatchObject({ status: 'issued', allowanceNumber: expect.stringMatching(/^\d{16}$/) });
    const numbers = [first.status === 'issued' ? first.allowanceNumber : ''];
    const second = await provider.allowance(refundOf(invoice, 150, numbers), clock);
    expect(second).toMatchObject({ status: 'issued' });
    numbers.push(second.status === 'issued' ? second.allowanceNumber : '');
    expect(await provider.allowance(refundOf(invoice, 50, numbers), clock)).toEqual({
      status: 'refused',
      code: 'ecpay_2000016',
      message: '折讓金額有誤，請確認',
    });
    expect(await provider.allowance(refundOf(invoice, 49, numbers), clock)).toMatchObject({ status: 'issued' });
    expect(
      [...emulator.allowances.values()].filter((a) => a.invoiceNumber === invoice.invoiceNumber).map((a) => a.total),
    ).toEqual([100, 150, 49]);
    expect(await provider.listAllowances(invoice.invoiceNumber, invoice.issuedAt, clock)).toHaveLength(3);
    expect(
      await provider.void({ invoiceNumber: invoice.invoiceNumber, issuedAt: invoice.issuedAt, reason: 'x' }, clock),
    ).toMatchObject({ status: 'refused', code: 'ecpay_5070450' });
  });

  it.each(['drop', 'http500'] as const)(
    'an allowance whose answer is lost (%s) is found in the list and answered issued, once',
    async (how) => {
      const invoice = await issued(sale(299));
      const known = await provider.allowance(refundOf(invoice, 100), clock);
      const knownNumbers = known.status === 'issued' ? [known.allowanceNumber] : [];
      emulator.failNext(ECPAY_EINVOICE_PATHS.allowance, how);
      const lost = await provider.allowance(refundOf(invoice, 100, knownNumbers), clock);
      const made = [...emulator.allowances.values()].filter((a) => a.invoiceNumber === invoice.invoiceNumber);
      expect(made).toHaveLength(2);
      expect(lost).toEqual({ status: 'issued', allowanceNumber: made[1]!.allowanceNumber });
      // A caller retrying later asks first: known, there is nothing more to find; unknown, it is found.
      const all = [...knownNumbers, made[1]!.allowanceNumber];
      expect(await provider.findAllowance(refundOf(invoice, 100, all), clock)).toBeNull();
      expect(await provider.findAllowance(refundOf(invoice, 100, knownNumbers), clock)).toEqual({
        allowanceNumber: made[1]!.allowanceNumber,
      });
    },
  );

  it('an envelope ECPay would not read is unanswered: other keys, another MerchantID, a Timestamp 10 minutes off', async () => {
    const others = [
      ecpayEinvoiceProvider({ ...ECPAY_EINVOICE_STAGE_MERCHANT, hashKey: 'abcdefghijklmnop', baseUrl: emulator.url }),
      ecpayEinvoiceProvider({ ...ECPAY_EINVOICE_STAGE_MERCHANT, merchantId: '2000214', baseUrl: emulator.url }),
    ];
    for (const other of others) await expect(other.issue(sale(), clock)).rejects.toThrow(EinvoiceUnanswered);
    await expect(provider.issue(sale(), new Date(clock.getTime() + 601_000))).rejects.toThrow('TransCode 104');
  });

  it('the smoke script passes against an emulator (on the real clock, as the script is)', async () => {
    const live = await startEcpayEinvoiceEmulator(ECPAY_EINVOICE_STAGE_MERCHANT);
    try {
      const lines: string[] = [];
      expect(await smokeEcpayEinvoice({ baseUrl: live.url, log: (line) => lines.push(line) })).toBe(true);
      expect(lines.filter((line) => line.startsWith('ok'))).toHaveLength(7);
      expect(lines.join('\n')).not.toMatch(/ejCk326UnaZWKisg|q9jcZX8Ib9LM8wYk/);
      expect(live.invoices.size).toBe(1);
      expect([...live.invoices.values()][0]).toMatchObject({ voided: true });
    } finally {
      await live.close();
    }
  });
});
