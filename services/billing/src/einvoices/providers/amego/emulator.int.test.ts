import { type AllowanceRequest, EinvoiceUnanswered, type IssueRequest } from '../port';
import { type AmegoEinvoiceProvider, amegoAllowanceNumber, amegoEinvoiceProvider } from './client';
import { type AmegoEmulator, startAmegoEinvoiceEmulator } from './emulator';
import { AMEGO_TEST_MERCHANT } from './merchant';
import { amegoForm } from './sign';
import { smokeAmegoEinvoice } from './smoke';

const SELLER = { sellerTaxId: AMEGO_TEST_MERCHANT.sellerTaxId, appKey: AMEGO_TEST_MERCHANT.appKey };

describe('Amego e-invoices against the emulator, over HTTP', () => {
  const clock = new Date('2026-11-26T16:30:00Z');
  let emulator: AmegoEmulator;
  let provider: AmegoEinvoiceProvider;
  let orders = 0;

  beforeAll(async () => {
    emulator = await startAmegoEinvoiceEmulator(SELLER, () => clock);
    provider = amegoEinvoiceProvider({ ...SELLER, baseUrl: emulator.url });
  });
  afterAll(() => emulator.close());

  const consumerRequest = (total = 300, overrides: Partial<IssueRequest> = {}): IssueRequest => ({
    merchantOrderNo: `ORD${++orders}`,
    buyer: { kind: 'member' },
    contact: { email: 'buyer@example.com', name: null },
    taxType: 'taxed',
    items: [{ description: 'Pro plan', quantity: 1, unitPrice: total, amount: total }],
    total,
    salesAmount: total,
    taxAmount: 0,
    ...overrides,
  });
  const issued = async (request: IssueRequest) => {
    const outcome = await provider.issue(request, clock);
    if (outcome.status !== 'issued') throw new Error(`${request.merchantOrderNo} refused: ${outcome.message}`);
    return outcome;
  };
  const allowanceOf = (
    invoice: { invoiceNumber: string; issuedAt: Date },
    key: string,
    total: number,
    split = { salesAmount: total - Math.round(total - total / 1.05), taxAmount: Math.round(total - total / 1.05) },
  ): AllowanceRequest => ({
    invoiceNumber: invoice.invoiceNumber,
    issuedAt: invoice.issuedAt,
    allowanceKey: key,
    knownAllowanceNumbers: [],
    buyer: { kind: 'member' },
    contact: { email: 'buyer@example.com', name: null },
    taxType: 'taxed',
    items: [{ description: 'Pro plan refund', quantity: 1, unitPrice: total, amount: total }],
    total,
    ...split,
  });

  it('issues a B2C invoice that the query then finds, with the same number, random code and time', async () => {
    const request = consumerRequest();
    const outcome = await issued(request);
    expect(outcome).toEqual({
      status: 'issued',
      invoiceNumber: expect.stringMatching(/^AB\d{8}$/),
      randomCode: expect.stringMatching(/^\d{4}$/),
      issuedAt: clock,
    });
    expect(emulator.invoices.get(request.merchantOrderNo)).toMatchObject({
      invoiceNumber: outcome.invoiceNumber,
      data: { CarrierType: 'amego', BuyerIdentifier: '0000000000', TotalAmount: 300 },
    });
    expect(await provider.query(request.merchantOrderNo, clock)).toEqual({
      invoiceNumber: outcome.invoiceNumber,
      randomCode: outcome.randomCode,
      issuedAt: clock,
      voided: false,
    });
    expect(await provider.query('NEVERISSUED', clock)).toBeNull();
  });

  it('numbers invoices in sequence', async () => {
    const first = await issued(consumerRequest());
    const second = await issued(consumerRequest());
    expect(Number(second.invoiceNumber.slice(2))).toBe(Number(first.invoiceNumber.slice(2)) + 1);
  });

  it("passes Amego's amount checks for a company's split, zero-rated and exempt invoices and each carrier", async () => {
    const company = await provider.issue(
      consumerRequest(105, {
        buyer: { kind: 'company', taxId: '28080623', companyName: '光貿科技有限公司' },
        salesAmount: 100,
        taxAmount: 5,
      }),
      clock,
    );
    expect(company).toMatchObject({ status: 'issued' });
    for (const overrides of [
      { taxType: 'zero_rated' as const },
      { taxType: 'exempt' as const },
      { buyer: { kind: 'mobile_barcode' as const, carrier: '/ABC+123' } },
      { buyer: { kind: 'citizen_certificate' as const, carrier: 'TP12345678901234' } },
      { buyer: { kind: 'donation' as const, donationCode: '168001' } },
    ]) {
      expect(await provider.issue(consumerRequest(300, overrides), clock)).toMatchObject({ status: 'issued' });
    }
    // A company split that is not Amego's (105 → 100 + 5) is refused with its code.
    expect(
      await provider.issue(
        consumerRequest(105, {
          buyer: { kind: 'company', taxId: '28080623', companyName: '光貿科技有限公司' },
          salesAmount: 99,
          taxAmount: 6,
        }),
        clock,
      ),
    ).toMatchObject({ status: 'refused', code: 'amego_3040177' });
  });

  it('asked again with the same OrderId, answers the same invoice and issues no other', async () => {
    const request = consumerRequest();
    const first = await issued(request);
    const count = emulator.invoices.size;
    const calls = emulator.calls.length;
    expect(await provider.issue(request, clock)).toEqual(first);
    expect(emulator.invoices.size).toBe(count);
    expect(emulator.calls.slice(calls).map((call) => [call.path, call.code])).toEqual([
      ['/json/f0401', 3040171],
      ['/json/invoice_query', 0],
    ]);
  });

  it('when the answer is dropped after Amego issued, throws EinvoiceUnanswered; the query finds it; asking again answers it', async () => {
    const request = consumerRequest();
    emulator.failNext('/json/f0401', 'drop');
    await expect(provider.issue(request, clock)).rejects.toThrow(EinvoiceUnanswered);
    const kept = emulator.invoices.get(request.merchantOrderNo)!;
    expect(kept).toBeDefined();
    expect(await provider.query(request.merchantOrderNo, clock)).toMatchObject({
      invoiceNumber: kept.invoiceNumber,
      voided: false,
    });
    expect(await provider.issue(request, clock)).toMatchObject({
      status: 'issued',
      invoiceNumber: kept.invoiceNumber,
      randomCode: kept.randomNumber,
    });
  });

  it('when Amego answers HTTP 500, throws EinvoiceUnanswered (it may have acted: here it did)', async () => {
    const request = consumerRequest();
    emulator.failNext('/json/f0401', 'http500');
    await expect(provider.issue(request, clock)).rejects.toThrow(EinvoiceUnanswered);
    expect(emulator.invoices.has(request.merchantOrderNo)).toBe(true);
    emulator.failNext('/json/invoice_query', 'http500');
    await expect(provider.query(request.merchantOrderNo, clock)).rejects.toThrow(EinvoiceUnanswered);
  });

  it('when Amego refuses without acting, answers its code', async () => {
    const request = consumerRequest();
    emulator.failNext('/json/f0401', 'refuse');
    expect(await provider.issue(request, clock)).toEqual({
      status: 'refused',
      code: 'amego_10',
      message: '系統停機維護中',
    });
    expect(emulator.invoices.has(request.merchantOrderNo)).toBe(false);
  });

  it('voids: the query then says voided, a second void answers voided too', async () => {
    const request = consumerRequest();
    const invoice = await issued(request);
    const voidRequest = { invoiceNumber: invoice.invoiceNumber, issuedAt: invoice.issuedAt, reason: 'cancelled' };
    expect(await provider.void(voidRequest, clock)).toEqual({ status: 'voided' });
    expect(emulator.invoices.get(request.merchantOrderNo)!.voidedAt).toEqual(clock);
    expect(await provider.query(request.merchantOrderNo, clock)).toMatchObject({ voided: true });
    expect(await provider.void(voidRequest, clock)).toEqual({ status: 'voided' });
    expect(await provider.void({ ...voidRequest, invoiceNumber: 'ZZ00000000' }, clock)).toMatchObject({
      status: 'refused',
      code: 'amego_3050125',
    });
    // The same OrderId asked again is refused: its invoice was voided.
    expect(await provider.issue(request, clock)).toMatchObject({ status: 'refused', code: 'amego_3040171' });
  });

  it('issues partial allowances up to the invoice, refuses one over what is left, and then refuses the void', async () => {
    const invoice = await issued(consumerRequest(300));
    expect(await provider.allowance(allowanceOf(invoice, 'REFA1', 105), clock)).toEqual({
      status: 'issued',
      allowanceNumber: 'REFA1',
    });
    expect(emulator.allowances.get('REFA1')).toMatchObject({
      invoiceNumber: invoice.invoiceNumber,
      totalAmount: 100,
      taxAmount: 5,
    });
    expect(await provider.allowance(allowanceOf(invoice, 'REFA2', 195), clock)).toEqual({
      status: 'issued',
      allowanceNumber: 'REFA2',
    });
    expect(
      await provider.allowance(allowanceOf(invoice, 'REFA3', 1, { salesAmount: 1, taxAmount: 0 }), clock),
    ).toMatchObject({
      status: 'refused',
      code: 'amego_4040173',
    });
    expect(emulator.allowances.has('REFA3')).toBe(false);
    expect(
      await provider.void({ invoiceNumber: invoice.invoiceNumber, issuedAt: invoice.issuedAt, reason: 'x' }, clock),
    ).toMatchObject({
      status: 'refused',
      code: 'amego_3050141',
    });
    const other = await issued(consumerRequest(100));
    expect(
      await provider.allowance(allowanceOf(other, 'REFB1', 210, { salesAmount: 200, taxAmount: 10 }), clock),
    ).toMatchObject({
      status: 'refused',
      code: 'amego_4040171',
    });
  });

  it('when the allowance answer is dropped, findAllowance finds it and asking again answers it without a second allowance', async () => {
    const invoice = await issued(consumerRequest(300));
    const key = 're_01JD3XAMPLE0000000000000001';
    emulator.failNext('/json/g0401', 'drop');
    await expect(provider.allowance(allowanceOf(invoice, key, 105), clock)).rejects.toThrow(EinvoiceUnanswered);
    const number = amegoAllowanceNumber(key);
    expect(emulator.allowances.has(number)).toBe(true);
    expect(await provider.findAllowance(allowanceOf(invoice, key, 105), clock)).toEqual({ allowanceNumber: number });
    expect(await provider.findAllowance({ allowanceKey: 'NEVERASKED' }, clock)).toBeNull();
    const count = emulator.allowances.size;
    expect(await provider.allowance(allowanceOf(invoice, key, 105), clock)).toEqual({
      status: 'issued',
      allowanceNumber: number,
    });
    expect(emulator.allowances.size).toBe(count);
  });

  it("refuses a form that is not signed with the seller's App Key, or whose time is more than 60 s off", async () => {
    const wrongKey = amegoEinvoiceProvider({ ...SELLER, appKey: 'another-key', baseUrl: emulator.url });
    expect(await wrongKey.issue(consumerRequest(), clock)).toMatchObject({ status: 'refused', code: 'amego_16' });
    expect(await provider.issue(consumerRequest(), new Date(clock.getTime() + 61_000))).toMatchObject({
      status: 'refused',
      code: 'amego_15',
    });
    const otherSeller = amegoEinvoiceProvider({ ...SELLER, sellerTaxId: '28080623', baseUrl: emulator.url });
    expect(await otherSeller.issue(consumerRequest(), clock)).toMatchObject({ status: 'refused', code: 'amego_12' });
    // A form posted by hand: f0501 needs an array.
    const form = amegoForm(SELLER, { CancelInvoiceNumber: 'AB12345678' }, clock);
    const answer = await fetch(`${emulator.url}/json/f0501`, { method: 'POST', body: new URLSearchParams(form) });
    expect(await answer.json()).toEqual({ code: 3050112, msg: '此 API 支援多張，data 應為陣列字串' });
  });

  it('the smoke script passes against the emulator and logs each step', async () => {
    const live = await startAmegoEinvoiceEmulator(SELLER);
    try {
      const lines: string[] = [];
      expect(await smokeAmegoEinvoice({ baseUrl: live.url, log: (line) => lines.push(line) })).toBe(true);
      expect(lines.filter((line) => line.startsWith('ok  '))).toHaveLength(6);
      expect(lines.some((line) => line.includes(SELLER.appKey))).toBe(false);
      expect(live.invoices.size).toBe(1);
      expect([...live.invoices.values()][0]!.voidedAt).not.toBeNull();
      // The same run against a seller whose key is wrong fails and says where.
      const failed: string[] = [];
      expect(
        await smokeAmegoEinvoice({
          baseUrl: live.url,
          merchant: { ...AMEGO_TEST_MERCHANT, appKey: 'wrong' },
          log: (line) => failed.push(line),
        }),
      ).toBe(false);
      expect(failed[1]).toMatch(/^FAIL f0401.*amego_16/);
    } finally {
      await live.close();
    }
  });
});
