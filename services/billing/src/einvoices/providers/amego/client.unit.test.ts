import { type AllowanceRequest, type EinvoiceBuyer, EinvoiceUnanswered, type IssueRequest } from '../port';
import { AMEGO_CODES, amegoAllowanceNumber, amegoEinvoiceProvider } from './client';
import { AMEGO_TEST_MERCHANT } from './merchant';
import { hasValidAmegoSign } from './sign';

const merchant = { ...AMEGO_TEST_MERCHANT, baseUrl: 'https://amego.test' };
const now = new Date('2026-11-26T16:30:00Z'); // 2026-11-27 00:30 in Taiwan
const NOW_SECONDS = String(now.getTime() / 1000);

type Seen = { path: string; form: Record<string, string>; data: unknown };

/** A fetch that records each call (its form, and `data` parsed) and answers `answer(path, data)` as JSON, or a string as it is. */
function fakeAmego(answer: (path: string, data: any) => unknown, status = 200) {
  const seen: Seen[] = [];
  const fetchFake: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const form = Object.fromEntries(new URLSearchParams(String(init?.body)));
    const data = JSON.parse(form.data!);
    seen.push({ path: url.pathname, form, data });
    const body = answer(url.pathname, data);
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  };
  return { seen, provider: amegoEinvoiceProvider(merchant, { fetch: fetchFake }) };
}

const ISSUED = {
  code: 0,
  msg: '',
  invoice_number: 'AA26513024',
  invoice_time: 1780000000,
  random_number: '7081',
  barcode: '11506AA265130247081',
  qrcode_left: '',
  qrcode_right: '',
};

const request = (buyer: EinvoiceBuyer, overrides: Partial<IssueRequest> = {}): IssueRequest => ({
  merchantOrderNo: 'ORD20261126001',
  buyer,
  contact: { email: 'buyer@example.com', name: '王小明' },
  taxType: 'taxed',
  items: [
    { description: 'Pro plan', quantity: 1, unitPrice: 300, amount: 300 },
    { description: 'Seats', quantity: 3, unitPrice: 35, amount: 105 },
  ],
  total: 405,
  salesAmount: 405,
  taxAmount: 0,
  ...overrides,
});

const ITEMS_SENT = [
  { Description: 'Pro plan', Quantity: 1, UnitPrice: 300, Amount: 300, TaxType: 1 },
  { Description: 'Seats', Quantity: 3, UnitPrice: 35, Amount: 105, TaxType: 1 },
];

describe('Amego client: issue (f0401)', () => {
  it('posts a signed form of the seller, data, time and sign to /json/f0401, and answers the invoice', async () => {
    const { seen, provider } = fakeAmego(() => ISSUED);
    const outcome = await provider.issue(request({ kind: 'member' }), now);
    expect(outcome).toEqual({
      status: 'issued',
      invoiceNumber: 'AA26513024',
      randomCode: '7081',
      issuedAt: new Date(1780000000 * 1000),
    });
    expect(seen).toHaveLength(1);
    const [call] = seen;
    expect(call!.path).toBe('/json/f0401');
    expect(Object.keys(call!.form).sort()).toEqual(['data', 'invoice', 'sign', 'time']);
    expect(call!.form).toMatchObject({ invoice: '12345678', time: NOW_SECONDS });
    expect(hasValidAmegoSign(call!.form, merchant.appKey)).toBe(true);
  });

  it("for a member carrier, sends CarrierType amego with the buyer's email as both ids and as BuyerEmailAddress", async () => {
    const { seen, provider } = fakeAmego(() => ISSUED);
    await provider.issue(request({ kind: 'member' }), now);
    expect(seen[0]!.data).toEqual({
      OrderId: 'ORD20261126001',
      BuyerIdentifier: '0000000000',
      BuyerName: '王小明',
      BuyerEmailAddress: 'buyer@example.com',
      CarrierType: 'amego',
      CarrierId1: 'buyer@example.com',
      CarrierId2: 'buyer@example.com',
      ProductItem: ITEMS_SENT,
      SalesAmount: 405,
      FreeTaxSalesAmount: 0,
      ZeroTaxSalesAmount: 0,
      TaxType: 1,
      TaxRate: '0.05',
      TaxAmount: 0,
      TotalAmount: 405,
      DetailVat: 1,
    });
  });

  it('for a member carrier without an email, refuses without calling Amego', async () => {
    const { seen, provider } = fakeAmego(() => ISSUED);
    const outcome = await provider.issue(request({ kind: 'member' }, { contact: { email: null, name: null } }), now);
    expect(outcome).toMatchObject({ status: 'refused', code: 'amego_member_needs_email' });
    expect(seen).toHaveLength(0);
  });

  it('for a mobile barcode or citizen certificate, sends 3J0002 or CQ0001 with the carrier as both ids', async () => {
    const { seen, provider } = fakeAmego(() => ISSUED);
    await provider.issue(request({ kind: 'mobile_barcode', carrier: '/ABC+123' }), now);
    await provider.issue(
      request({ kind: 'citizen_certificate', carrier: 'TP12345678901234' }, { contact: { email: null, name: null } }),
      now,
    );
    expect(seen[0]!.data).toMatchObject({
      BuyerIdentifier: '0000000000',
      CarrierType: '3J0002',
      CarrierId1: '/ABC+123',
      CarrierId2: '/ABC+123',
    });
    expect(seen[0]!.data).not.toHaveProperty('NPOBAN');
    expect(seen[1]!.data).toMatchObject({
      BuyerIdentifier: '0000000000',
      BuyerName: '消費者',
      CarrierType: 'CQ0001',
      CarrierId1: 'TP12345678901234',
      CarrierId2: 'TP12345678901234',
    });
    expect(seen[1]!.data).not.toHaveProperty('BuyerEmailAddress');
  });

  it('for a donation, sends NPOBAN and no carrier', async () => {
    const { seen, provider } = fakeAmego(() => ISSUED);
    await provider.issue(request({ kind: 'donation', donationCode: '168001' }), now);
    expect(seen[0]!.data).toMatchObject({ BuyerIdentifier: '0000000000', NPOBAN: '168001' });
    expect(seen[0]!.data).not.toHaveProperty('CarrierType');
  });

  it("for a company, sends its 統一編號 and name and the caller's split: SalesAmount untaxed, TaxAmount, TotalAmount", async () => {
    const { seen, provider } = fakeAmego(() => ISSUED);
    await provider.issue(
      request(
        { kind: 'company', taxId: '28080623', companyName: '光貿科技有限公司' },
        { salesAmount: 386, taxAmount: 19 },
      ),
      now,
    );
    expect(seen[0]!.data).toEqual({
      OrderId: 'ORD20261126001',
      BuyerIdentifier: '28080623',
      BuyerName: '光貿科技有限公司',
      BuyerEmailAddress: 'buyer@example.com',
      ProductItem: ITEMS_SENT,
      SalesAmount: 386,
      FreeTaxSalesAmount: 0,
      ZeroTaxSalesAmount: 0,
      TaxType: 1,
      TaxRate: '0.05',
      TaxAmount: 19,
      TotalAmount: 405,
      DetailVat: 1,
    });
  });

  it('for a zero-rated sale, sends the whole as ZeroTaxSalesAmount with TaxType 2, rate 0 and the customs mark and reason', async () => {
    const { seen, provider } = fakeAmego(() => ISSUED);
    await provider.issue(request({ kind: 'member' }, { taxType: 'zero_rated' }), now);
    expect(seen[0]!.data).toMatchObject({
      ProductItem: ITEMS_SENT.map((item) => ({ ...item, TaxType: 2 })),
      SalesAmount: 0,
      FreeTaxSalesAmount: 0,
      ZeroTaxSalesAmount: 405,
      TaxType: 2,
      TaxRate: '0',
      TaxAmount: 0,
      TotalAmount: 405,
      CustomsClearanceMark: 1,
      ZeroTaxRateReason: 72,
    });
    const withGoods = amegoEinvoiceProvider(merchant, {
      fetch: async () => new Response(JSON.stringify(ISSUED)),
      zeroRated: { customsClearanceMark: 2, zeroTaxRateReason: 71 },
    });
    await expect(withGoods.issue(request({ kind: 'member' }, { taxType: 'zero_rated' }), now)).resolves.toMatchObject({
      status: 'issued',
    });
  });

  it('for an exempt sale, sends the whole as FreeTaxSalesAmount with TaxType 3 and no customs fields', async () => {
    const { seen, provider } = fakeAmego(() => ISSUED);
    await provider.issue(request({ kind: 'member' }, { taxType: 'exempt' }), now);
    expect(seen[0]!.data).toMatchObject({
      ProductItem: ITEMS_SENT.map((item) => ({ ...item, TaxType: 3 })),
      SalesAmount: 0,
      FreeTaxSalesAmount: 405,
      ZeroTaxSalesAmount: 0,
      TaxType: 3,
      TaxRate: '0',
      TaxAmount: 0,
      TotalAmount: 405,
    });
    expect(seen[0]!.data).not.toHaveProperty('CustomsClearanceMark');
  });

  it('when Amego refuses, answers amego_<code> with its message (a code sent as a string too)', async () => {
    const { provider } = fakeAmego(() => ({ code: 3040122, msg: 'BuyerIdentifier 格式錯誤' }));
    expect(await provider.issue(request({ kind: 'member' }), now)).toEqual({
      status: 'refused',
      code: 'amego_3040122',
      message: 'BuyerIdentifier 格式錯誤',
    });
    const strings = fakeAmego(() => ({ code: '3040132', msg: '載具號碼不存在' }));
    expect(await strings.provider.issue(request({ kind: 'mobile_barcode', carrier: '/ABC+123' }), now)).toEqual({
      status: 'refused',
      code: 'amego_3040132',
      message: '載具號碼不存在',
    });
  });

  it('when the OrderId was used (3040171), queries it and answers the invoice issued before: exactly once', async () => {
    const { seen, provider } = fakeAmego((path) =>
      path === '/json/f0401'
        ? { code: AMEGO_CODES.orderIdUsed, msg: 'OrderId 重複' }
        : {
            code: 0,
            msg: '',
            data: {
              invoice_number: 'AA26513024',
              invoice_type: 'C0401',
              invoice_date: 20261127,
              invoice_time: '00:29:58',
              random_number: '7081',
              cancel_date: 0,
              order_id: 'ORD20261126001',
              wait: [],
              allowance: [],
            },
          },
    );
    expect(await provider.issue(request({ kind: 'member' }), now)).toEqual({
      status: 'issued',
      invoiceNumber: 'AA26513024',
      randomCode: '7081',
      issuedAt: new Date('2026-11-26T16:29:58Z'),
    });
    expect(seen.map((call) => call.path)).toEqual(['/json/f0401', '/json/invoice_query']);
    expect(seen[1]!.data).toEqual({ type: 'order', order_id: 'ORD20261126001' });
  });

  it('when the OrderId was used but its invoice was voided, or the query finds none, answers the refusal', async () => {
    const voided = fakeAmego((path) =>
      path === '/json/f0401'
        ? { code: 3040171, msg: 'OrderId 重複' }
        : {
            code: 0,
            msg: '',
            data: {
              invoice_number: 'AA26513024',
              invoice_type: 'C0501',
              invoice_date: 20261127,
              invoice_time: '00:29:58',
              random_number: '7081',
              cancel_date: 1780000100,
            },
          },
    );
    expect(await voided.provider.issue(request({ kind: 'member' }), now)).toMatchObject({
      status: 'refused',
      code: 'amego_3040171',
      message: expect.stringContaining('AA26513024 was voided'),
    });
    const none = fakeAmego((path) =>
      path === '/json/f0401' ? { code: 3040171, msg: '該訂單編號正在註銷重開中' } : { code: 71, msg: '查無資料' },
    );
    expect(await none.provider.issue(request({ kind: 'member' }), now)).toEqual({
      status: 'refused',
      code: 'amego_3040171',
      message: '該訂單編號正在註銷重開中',
    });
  });
});

describe('Amego client: query (invoice_query by OrderId)', () => {
  const data = {
    invoice_number: 'AA26513024',
    invoice_type: 'C0401',
    invoice_status: 99,
    invoice_date: 20261127,
    invoice_time: '00:29:58',
    random_number: '7081',
    cancel_date: 0,
    order_id: 'ORD20261126001',
    wait: [],
    allowance: [],
  };

  it('asks by type order, and answers the invoice with its Taiwan date and time as an instant', async () => {
    const { seen, provider } = fakeAmego(() => ({ code: 0, msg: '', data }));
    expect(await provider.query('ORD20261126001', now)).toEqual({
      invoiceNumber: 'AA26513024',
      randomCode: '7081',
      issuedAt: new Date('2026-11-26T16:29:58Z'),
      voided: false,
    });
    expect(seen[0]!.path).toBe('/json/invoice_query');
    expect(seen[0]!.data).toEqual({ type: 'order', order_id: 'ORD20261126001' });
  });

  it('when Amego has no such order (71 查無資料), answers null', async () => {
    const { provider } = fakeAmego(() => ({ code: 71, msg: '查無資料' }));
    expect(await provider.query('ORD20261126001', now)).toBeNull();
  });

  it('says voided for a cancel date, a void message type, or a void waiting in the schedule', async () => {
    for (const voided of [
      { cancel_date: 1780000100 },
      { invoice_type: 'C0501' },
      { invoice_type: 'F0501' },
      { wait: [{ invoice_type: 'C0501', create_date: 1780000100 }] },
    ]) {
      const { provider } = fakeAmego(() => ({ code: 0, msg: '', data: { ...data, ...voided } }));
      expect(await provider.query('ORD20261126001', now)).toMatchObject({ voided: true });
    }
  });

  it('when Amego answers another code, an invoice without a number or date, or another order, it is no answer', async () => {
    for (const body of [
      { code: 51, msg: '該發票超過查詢期限' },
      { code: 0, msg: '' },
      { code: 0, msg: '', data: { ...data, invoice_number: '' } },
      { code: 0, msg: '', data: { ...data, invoice_time: '' } },
      { code: 0, msg: '', data: { ...data, order_id: 'ANOTHER' } },
    ]) {
      const { provider } = fakeAmego(() => body);
      await expect(provider.query('ORD20261126001', now)).rejects.toThrow(EinvoiceUnanswered);
    }
  });
});

describe('Amego client: void (f0501)', () => {
  const voidRequest = { invoiceNumber: 'AA26513024', issuedAt: now, reason: 'order cancelled' };

  it('posts the number as an array of CancelInvoiceNumber (Amego takes no reason), and answers voided', async () => {
    const { seen, provider } = fakeAmego(() => ({ code: 0, msg: '' }));
    expect(await provider.void(voidRequest, now)).toEqual({ status: 'voided' });
    expect(seen[0]!.path).toBe('/json/f0501');
    expect(seen[0]!.data).toEqual([{ CancelInvoiceNumber: 'AA26513024' }]);
  });

  it('when already voided (3050122), answers voided: a void asked again after a lost answer', async () => {
    const { provider } = fakeAmego(() => ({ code: 3050122, msg: 'AA26513024 已存在開立作廢' }));
    expect(await provider.void(voidRequest, now)).toEqual({ status: 'voided' });
  });

  it('when a change waits (3050131), asks the query by number: a pending void is voided, anything else refused', async () => {
    const pending = fakeAmego((path) =>
      path === '/json/f0501'
        ? { code: 3050131, msg: 'AA26513024 等待作廢' }
        : {
            code: 0,
            msg: '',
            data: {
              invoice_number: 'AA26513024',
              invoice_type: 'C0401',
              invoice_date: 20261127,
              invoice_time: '00:29:58',
              random_number: '7081',
              cancel_date: 0,
              wait: [{ invoice_type: 'C0501', create_date: 1780000100 }],
            },
          },
    );
    expect(await pending.provider.void(voidRequest, now)).toEqual({ status: 'voided' });
    expect(pending.seen[1]!.data).toEqual({ type: 'invoice', invoice_number: 'AA26513024' });
    const issuing = fakeAmego((path) =>
      path === '/json/f0501'
        ? { code: 3050131, msg: 'AA26513024 等待開立' }
        : {
            code: 0,
            msg: '',
            data: {
              invoice_number: 'AA26513024',
              invoice_type: 'C0401',
              invoice_date: 20261127,
              invoice_time: '00:29:58',
              random_number: '7081',
              cancel_date: 0,
              wait: [{ invoice_type: 'C0401', create_date: 1780000100 }],
            },
          },
    );
    expect(await issuing.provider.void(voidRequest, now)).toEqual({
      status: 'refused',
      code: 'amego_3050131',
      message: 'AA26513024 等待開立',
    });
  });

  it('when the invoice has an allowance (3050141), answers the refusal', async () => {
    const { provider } = fakeAmego(() => ({ code: 3050141, msg: 'AA26513024 已存在折讓單' }));
    expect(await provider.void(voidRequest, now)).toEqual({
      status: 'refused',
      code: 'amego_3050141',
      message: 'AA26513024 已存在折讓單',
    });
  });
});

describe('Amego client: allowance (g0401)', () => {
  const allowanceRequest = (overrides: Partial<AllowanceRequest> = {}): AllowanceRequest => ({
    invoiceNumber: 'AA26513024',
    issuedAt: new Date('2026-11-20T03:00:00Z'),
    allowanceKey: 'REF123',
    knownAllowanceNumbers: [],
    buyer: { kind: 'company', taxId: '28080623', companyName: '光貿科技有限公司' },
    contact: { email: null, name: null },
    taxType: 'taxed',
    items: [
      { description: 'Pro plan', quantity: 1, unitPrice: 100, amount: 100 },
      { description: 'Seats', quantity: 2, unitPrice: 55, amount: 110 },
    ],
    total: 210,
    salesAmount: 200,
    taxAmount: 10,
    ...overrides,
  });

  it("posts one record with the key as AllowanceNumber, today's date, the original invoice, untaxed lines with their share of the tax", async () => {
    const { seen, provider } = fakeAmego(() => ({ code: 0, msg: '' }));
    expect(await provider.allowance(allowanceRequest(), now)).toEqual({ status: 'issued', allowanceNumber: 'REF123' });
    expect(seen[0]!.path).toBe('/json/g0401');
    expect(seen[0]!.data).toEqual([
      {
        AllowanceNumber: 'REF123',
        AllowanceDate: '20261127',
        AllowanceType: 2,
        BuyerIdentifier: '28080623',
        BuyerName: '光貿科技有限公司',
        ProductItem: [
          {
            OriginalInvoiceNumber: 'AA26513024',
            OriginalInvoiceDate: 20261120,
            OriginalDescription: 'Pro plan',
            Quantity: 1,
            UnitPrice: 95,
            Amount: 95,
            Tax: 5,
            TaxType: 1,
          },
          {
            OriginalInvoiceNumber: 'AA26513024',
            OriginalInvoiceDate: 20261120,
            OriginalDescription: 'Seats',
            Quantity: 2,
            UnitPrice: 52.5,
            Amount: 105,
            Tax: 5,
            TaxType: 1,
          },
        ],
        TaxAmount: 10,
        TotalAmount: 200,
      },
    ]);
  });

  it('shares the tax in whole dollars by largest remainder, so the lines add up to the split exactly', async () => {
    const { seen, provider } = fakeAmego(() => ({ code: 0, msg: '' }));
    await provider.allowance(
      allowanceRequest({
        buyer: { kind: 'member' },
        contact: { email: 'buyer@example.com', name: null },
        items: [
          { description: 'A', quantity: 1, unitPrice: 33, amount: 33 },
          { description: 'B', quantity: 1, unitPrice: 33, amount: 33 },
          { description: 'C', quantity: 1, unitPrice: 34, amount: 34 },
        ],
        total: 100,
        salesAmount: 95,
        taxAmount: 5,
      }),
      now,
    );
    const [record] = seen[0]!.data as any[];
    expect(record).toMatchObject({
      BuyerIdentifier: '0000000000',
      BuyerName: '消費者',
      BuyerEmailAddress: 'buyer@example.com',
      TaxAmount: 5,
      TotalAmount: 95,
    });
    expect(record.ProductItem.map((item: any) => [item.Amount, item.Tax])).toEqual([
      [31, 2],
      [32, 1],
      [32, 2],
    ]);
  });

  it('sends a key longer than 16 characters as K and 15 hex digits of its SHA-256, the same every time', async () => {
    const long = 're_01JD3XAMPLE0000000000000001';
    expect(amegoAllowanceNumber('REF123')).toBe('REF123');
    expect(amegoAllowanceNumber(long)).toMatch(/^K[0-9A-F]{15}$/);
    expect(amegoAllowanceNumber(long)).toBe(amegoAllowanceNumber(long));
    expect(amegoAllowanceNumber(long)).not.toBe(amegoAllowanceNumber(`${long}2`));
    const { seen, provider } = fakeAmego(() => ({ code: 0, msg: '' }));
    expect(await provider.allowance(allowanceRequest({ allowanceKey: long }), now)).toEqual({
      status: 'issued',
      allowanceNumber: amegoAllowanceNumber(long),
    });
    expect((seen[0]!.data as any[])[0].AllowanceNumber).toBe(amegoAllowanceNumber(long));
  });

  it('when the number is taken (4040161) and allowance_status finds it held, answers issued: exactly once', async () => {
    const { seen, provider } = fakeAmego((path) =>
      path === '/json/g0401'
        ? { code: '4040161', msg: 'REF123 已存在折讓開立' }
        : { code: 0, msg: '', data: [{ allowance_number: 'REF123', type: 'B0401', status: 1 }] },
    );
    expect(await provider.allowance(allowanceRequest(), now)).toEqual({ status: 'issued', allowanceNumber: 'REF123' });
    expect(seen.map((call) => call.path)).toEqual(['/json/g0401', '/json/allowance_status']);
    expect(seen[1]!.data).toEqual([{ AllowanceNumber: 'REF123' }]);
    // Voided in Amego's back office since: not held, so the refusal stands.
    const voided = fakeAmego((path) =>
      path === '/json/g0401'
        ? { code: '4040161', msg: 'REF123 已存在折讓開立' }
        : { code: 0, msg: '', data: [{ allowance_number: 'REF123', type: 'D0501', status: 99 }] },
    );
    expect(await voided.provider.allowance(allowanceRequest(), now)).toEqual({
      status: 'refused',
      code: 'amego_4040161',
      message: 'REF123 已存在折讓開立',
    });
  });

  it('when the allowance would exceed what the invoice has left, answers the refusal', async () => {
    const { provider } = fakeAmego(() => ({
      code: '4040173',
      msg: '第1筆 此折讓單加上其他同發票折讓單的折讓金額已大於原發票的開立金額',
    }));
    expect(await provider.allowance(allowanceRequest(), now)).toMatchObject({
      status: 'refused',
      code: 'amego_4040173',
    });
  });

  it('refuses to send an allowance whose items or split do not add up to its total', async () => {
    const { seen, provider } = fakeAmego(() => ({ code: 0, msg: '' }));
    await expect(provider.allowance(allowanceRequest({ total: 211, salesAmount: 201 }), now)).rejects.toThrow(
      RangeError,
    );
    await expect(provider.allowance(allowanceRequest({ taxAmount: 11 }), now)).rejects.toThrow(RangeError);
    expect(seen).toHaveLength(0);
  });

  it("findAllowance reads allowance_status by the key's number: x0401 is held, NOT_FOUND and a voided x0501 are none", async () => {
    for (const [type, found] of [
      ['D0401', { allowanceNumber: 'REF123' }],
      ['B0401', { allowanceNumber: 'REF123' }],
      ['NOT_FOUND', null],
      ['D0501', null],
    ] as const) {
      const { seen, provider } = fakeAmego(() => ({ code: 0, msg: '', data: [{ allowance_number: 'REF123', type }] }));
      expect(await provider.findAllowance(allowanceRequest(), now)).toEqual(found);
      expect(seen[0]!.path).toBe('/json/allowance_status');
      expect(seen[0]!.data).toEqual([{ AllowanceNumber: 'REF123' }]);
    }
    const { provider } = fakeAmego(() => ({
      code: 0,
      msg: '',
      data: [{ allowance_number: 'REF123', type: 'TYPE_ERROR' }],
    }));
    await expect(provider.findAllowance(allowanceRequest(), now)).rejects.toThrow(EinvoiceUnanswered);
  });
});

describe('Amego client: no answer that can be trusted', () => {
  const issue = (fetchFake: typeof fetch, timeoutMs?: number) =>
    amegoEinvoiceProvider(merchant, { fetch: fetchFake, timeoutMs }).issue(
      request({ kind: 'mobile_barcode', carrier: '/ABC+123' }),
      now,
    );

  it('a transport failure, an HTTP error, a body that is not JSON or has no code, or a success without an invoice throws EinvoiceUnanswered', async () => {
    const failures: (typeof fetch)[] = [
      async () => {
        throw new TypeError('fetch failed');
      },
      async () => new Response('busy', { status: 500 }),
      async () => new Response('Bad Gateway', { status: 502 }),
      async () => new Response('<html>maintenance</html>'),
      async () => new Response('[]'),
      async () => new Response(JSON.stringify({ msg: 'no code' })),
      async () => new Response(JSON.stringify({ code: 'E1', msg: '' })),
      async () => new Response(JSON.stringify({ code: 0, msg: '' })),
      async () => new Response(JSON.stringify({ ...ISSUED, random_number: '12' })),
    ];
    for (const fetchFake of failures) {
      const error = await issue(fetchFake).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EinvoiceUnanswered);
      // Never the App Key, nor the buyer's carrier.
      expect((error as Error).message).not.toContain(merchant.appKey);
      expect((error as Error).message).not.toContain('/ABC+123');
    }
  });

  it('a call longer than the timeout (20 s by default) throws EinvoiceUnanswered', async () => {
    const hanging: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    await expect(issue(hanging, 50)).rejects.toThrow(EinvoiceUnanswered);
  });
});
