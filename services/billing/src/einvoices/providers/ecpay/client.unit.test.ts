import { type AllowanceRequest, EinvoiceUnanswered, type IssueRequest } from '../port';
import { decryptData, encryptData } from './cipher';
import { ecpayEinvoiceProvider } from './client';
import { ECPAY_EINVOICE_STAGE_MERCHANT } from './merchant';

const MERCHANT = { ...ECPAY_EINVOICE_STAGE_MERCHANT, baseUrl: 'https://ecpay.test' };
/** 2026-11-27 00:30 in Taipei: the Taiwan date differs from the UTC one. */
const NOW = new Date('2026-11-26T16:30:00Z');
const ISSUED_AT = new Date('2026-11-26T16:30:05Z');
const CARRIER = '/SECRET1';

type Call = { url: string; path: string; outside: Record<string, unknown>; inside: Record<string, unknown> };

/** A fetch that records what was posted (outside and inside Data) and answers `answer` (sealed unless a string or Response). */
function fakeEcpay(answer: (path: string, inside: Record<string, unknown>, calls: Call[]) => unknown, status = 200) {
  const calls: Call[] = [];
  const fetchFake: typeof fetch = async (input, init) => {
    expect(init?.method).toBe('POST');
    expect(new Headers(init?.headers).get('content-type')).toBe('application/json');
    const outside = JSON.parse(String(init?.body)) as Record<string, unknown>;
    const inside = decryptData(String(outside.Data), MERCHANT);
    const path = new URL(String(input)).pathname;
    calls.push({ url: String(input), path, outside, inside });
    const body = answer(path, inside, calls);
    if (body instanceof Response) return body;
    return new Response(typeof body === 'string' ? body : JSON.stringify(body), { status });
  };
  return { calls, fetch: fetchFake };
}

/** An answer ECPay encrypted, carrying `inside`. */
const sealed = (inside: Record<string, unknown>, keys = MERCHANT) => ({
  PlatformID: 0,
  MerchantID: 2000132,
  RpHeader: { Timestamp: 1795710600, RqID: '133d9e65-e8fe-4ffe-91fa-cc2152c42dde', Revision: null },
  TransCode: 1,
  TransMsg: 'Success',
  Data: encryptData(inside, keys),
});

const ISSUED = {
  RtnCode: 1,
  RtnMsg: '開立發票成功',
  InvoiceNo: 'AB12345678',
  InvoiceDate: '2026-11-27 00:30:05',
  RandomNumber: '0427',
};
/** GetIssue's answer, in the shape of the one Rytass/Utils recorded from the stage site. */
const QUERIED = {
  RtnCode: 1,
  RtnMsg: '查詢成功',
  IIS_Mer_ID: 2000132,
  IIS_Number: 'AB12345678',
  IIS_Relate_Number: 'ORDER1',
  IIS_Identifier: '0000000000',
  IIS_Category: 'B2C',
  IIS_Tax_Type: '1',
  IIS_Tax_Amount: 0,
  IIS_Sales_Amount: 299,
  IIS_Create_Date: '2026-11-27 00:30:05',
  IIS_Issue_Status: '1',
  IIS_Invalid_Status: '0',
  IIS_Remain_Allowance_Amt: 299,
  IIS_Random_Number: '0427',
};

const REQUEST: IssueRequest = {
  merchantOrderNo: 'ORDER1',
  buyer: { kind: 'member' },
  contact: { email: 'buyer@example.com', name: '王小明' },
  taxType: 'taxed',
  items: [{ description: 'Pro 月方案', quantity: 1, unitPrice: 299, amount: 299 }],
  total: 299,
  salesAmount: 299,
  taxAmount: 0,
};

const provider = (fetchFn: typeof globalThis.fetch, options = {}) =>
  ecpayEinvoiceProvider(MERCHANT, { fetch: fetchFn, ...options });

describe('ECPay e-invoice: Issue', () => {
  it('posts the v3 envelope to /B2CInvoice/Issue with every field for a member carrier, and reads the invoice', async () => {
    const fake = fakeEcpay(() => sealed(ISSUED));
    expect(await provider(fake.fetch).issue(REQUEST, NOW)).toEqual({
      status: 'issued',
      invoiceNumber: 'AB12345678',
      randomCode: '0427',
      issuedAt: ISSUED_AT,
    });
    expect(fake.calls).toHaveLength(1);
    const [call] = fake.calls;
    expect(call!.url).toBe('https://ecpay.test/B2CInvoice/Issue');
    expect(call!.outside).toEqual({
      MerchantID: '2000132',
      RqHeader: { Timestamp: 1795710600 },
      Data: expect.any(String),
    });
    expect(call!.inside).toEqual({
      MerchantID: '2000132',
      RelateNumber: 'ORDER1',
      CustomerID: '',
      CustomerIdentifier: '',
      CustomerName: '王小明',
      CustomerAddr: '',
      CustomerPhone: '',
      CustomerEmail: 'buyer@example.com',
      Print: '0',
      Donation: '0',
      LoveCode: '',
      CarrierType: '1',
      CarrierNum: '',
      TaxType: '1',
      SalesAmount: 299,
      InvoiceRemark: '',
      InvType: '07',
      vat: '1',
      Items: [
        {
          ItemSeq: 1,
          ItemName: 'Pro 月方案',
          ItemCount: 1,
          ItemWord: '式',
          ItemPrice: 299,
          ItemTaxType: '1',
          ItemAmount: 299,
        },
      ],
    });
  });

  it.each([
    [
      { kind: 'mobile_barcode', carrier: CARRIER },
      { CarrierType: '3', CarrierNum: CARRIER, Print: '0', Donation: '0' },
    ],
    [
      { kind: 'citizen_certificate', carrier: 'AB12345678901234' },
      { CarrierType: '2', CarrierNum: 'AB12345678901234', Print: '0', Donation: '0' },
    ],
    [
      { kind: 'donation', donationCode: '168001' },
      { Donation: '1', LoveCode: '168001', CarrierType: '', Print: '0' },
    ],
    [
      { kind: 'company', taxId: '97025978', companyName: '綠界科技股份有限公司' },
      {
        CustomerIdentifier: '97025978',
        CustomerName: '綠界科技股份有限公司',
        CarrierType: '1',
        CarrierNum: '',
        Print: '0',
        Donation: '0',
        CustomerEmail: 'buyer@example.com',
      },
    ],
  ] as const)('a %j buyer is sent as %j', async (buyer, fields) => {
    const fake = fakeEcpay(() => sealed(ISSUED));
    await provider(fake.fetch).issue({ ...REQUEST, buyer }, NOW);
    expect(fake.calls[0]!.inside).toMatchObject({ ...fields, CustomerAddr: '', SalesAmount: 299, vat: '1' });
  });

  it('a company is priced as ECPay prices every B2C-API invoice: SalesAmount is the total, tax included (vat 1)', async () => {
    const fake = fakeEcpay(() => sealed(ISSUED));
    const company = { kind: 'company', taxId: '97025978', companyName: 'ACME' } as const;
    await provider(fake.fetch).issue({ ...REQUEST, buyer: company, salesAmount: 285, taxAmount: 14 }, NOW);
    expect(fake.calls[0]!.inside).toMatchObject({
      SalesAmount: 299,
      vat: '1',
      Items: [{ ItemPrice: 299, ItemAmount: 299 }],
    });
    expect(fake.calls[0]!.inside).not.toHaveProperty('TaxAmount');
  });

  it.each([
    ['taxed', { TaxType: '1' }, ['ClearanceMark', 'ZeroTaxRateReason', 'SpecialTaxType']],
    ['zero_rated', { TaxType: '2', ClearanceMark: '1', ZeroTaxRateReason: '72' }, ['SpecialTaxType']],
    ['exempt', { TaxType: '3', SpecialTaxType: 8 }, ['ClearanceMark', 'ZeroTaxRateReason']],
  ] as const)('a %s invoice carries %j (and its items that ItemTaxType)', async (taxType, fields, absent) => {
    const fake = fakeEcpay(() => sealed(ISSUED));
    await provider(fake.fetch).issue({ ...REQUEST, taxType }, NOW);
    const { inside } = fake.calls[0]!;
    expect(inside).toMatchObject(fields);
    expect((inside.Items as { ItemTaxType: string }[])[0]!.ItemTaxType).toBe(fields.TaxType);
    for (const field of absent) expect(inside).not.toHaveProperty(field);
  });

  it('takes the zero-rated ClearanceMark and reason from its options', async () => {
    const fake = fakeEcpay(() => sealed(ISSUED));
    const options = { zeroTaxRate: { clearanceMark: '2', reason: '71' } as const };
    await provider(fake.fetch, options).issue({ ...REQUEST, taxType: 'zero_rated' }, NOW);
    expect(fake.calls[0]!.inside).toMatchObject({ TaxType: '2', ClearanceMark: '2', ZeroTaxRateReason: '71' });
  });

  it('when ECPay refuses, answers ecpay_<RtnCode> and its RtnMsg', async () => {
    const fake = fakeEcpay(() => sealed({ RtnCode: 5000022, RtnMsg: '驗證發票金額發現錯誤，與商品合計金額不符' }));
    expect(await provider(fake.fetch).issue(REQUEST, NOW)).toEqual({
      status: 'refused',
      code: 'ecpay_5000022',
      message: '驗證發票金額發現錯誤，與商品合計金額不符',
    });
  });

  it("a refusal that quotes the buyer's carrier does not pass it on", async () => {
    const fake = fakeEcpay(() => sealed({ RtnCode: 1200087, RtnMsg: `手機條碼 ${CARRIER} 不存在` }));
    const buyer = { kind: 'mobile_barcode', carrier: CARRIER } as const;
    expect(await provider(fake.fetch).issue({ ...REQUEST, buyer }, NOW)).toEqual({
      status: 'refused',
      code: 'ecpay_1200087',
      message: '手機條碼 *** 不存在',
    });
  });

  it('when the RelateNumber was used (5070357), asks GetIssue and answers the invoice ECPay holds: issued once', async () => {
    const fake = fakeEcpay((path) =>
      path === '/B2CInvoice/Issue'
        ? sealed({
            RtnCode: 5070357,
            RtnMsg: 'B2C開立發票 自訂編號重覆，請重新設定',
            InvoiceNo: '',
            InvoiceDate: '',
            RandomNumber: '',
          })
        : sealed(QUERIED),
    );
    expect(await provider(fake.fetch).issue(REQUEST, NOW)).toEqual({
      status: 'issued',
      invoiceNumber: 'AB12345678',
      randomCode: '0427',
      issuedAt: ISSUED_AT,
    });
    expect(fake.calls.map((c) => c.path)).toEqual(['/B2CInvoice/Issue', '/B2CInvoice/GetIssue']);
    expect(fake.calls[1]!.inside).toEqual({ MerchantID: '2000132', RelateNumber: 'ORDER1' });
  });

  it('when the RelateNumber was used by an invoice since voided, refuses: that order is not invoiced again under it', async () => {
    const fake = fakeEcpay((path) =>
      path === '/B2CInvoice/Issue'
        ? sealed({ RtnCode: 5070357, RtnMsg: 'B2C開立發票 自訂編號重覆，請重新設定' })
        : sealed({ ...QUERIED, IIS_Invalid_Status: '1' }),
    );
    expect(await provider(fake.fetch).issue(REQUEST, NOW)).toEqual({
      status: 'refused',
      code: 'ecpay_5070357',
      message: expect.stringContaining('AB12345678, voided'),
    });
  });

  it('when the buyer has no email, refuses before asking: ECPay needs CustomerEmail or CustomerPhone', async () => {
    const fake = fakeEcpay(() => sealed(ISSUED));
    const outcome = await provider(fake.fetch).issue({ ...REQUEST, contact: { email: null, name: null } }, NOW);
    expect(outcome).toMatchObject({ status: 'refused', code: 'ecpay_missing_contact' });
    expect(fake.calls).toHaveLength(0);
  });

  it.each([
    ['a RelateNumber with a dash', { merchantOrderNo: 'ORDER-1' }],
    ['a RelateNumber of 31', { merchantOrderNo: 'A'.repeat(31) }],
    ['items that do not add up to the total', { total: 300, salesAmount: 300 }],
    [
      'an item whose amount is not quantity x price',
      { items: [{ description: 'x', quantity: 2, unitPrice: 150, amount: 299 }] },
    ],
    ['no items', { items: [] }],
    ['salesAmount + taxAmount not the total', { salesAmount: 285, taxAmount: 10 }],
    ['a total of 0', { items: [{ description: 'x', quantity: 1, unitPrice: 0, amount: 0 }], total: 0, salesAmount: 0 }],
  ])('refuses %s before any call', async (_, change) => {
    const fake = fakeEcpay(() => sealed(ISSUED));
    await expect(provider(fake.fetch).issue({ ...REQUEST, ...change }, NOW)).rejects.toThrow(RangeError);
    expect(fake.calls).toHaveLength(0);
  });
});

describe('ECPay e-invoice: GetIssue by RelateNumber', () => {
  it('reads the invoice and its void flag (IIS_Invalid_Status)', async () => {
    const fake = fakeEcpay(() => sealed(QUERIED));
    expect(await provider(fake.fetch).query('ORDER1', NOW)).toEqual({
      invoiceNumber: 'AB12345678',
      randomCode: '0427',
      issuedAt: ISSUED_AT,
      voided: false,
    });
    expect(fake.calls[0]!.path).toBe('/B2CInvoice/GetIssue');
    const voided = fakeEcpay(() => sealed({ ...QUERIED, IIS_Invalid_Status: 1 }));
    expect(await provider(voided.fetch).query('ORDER1', NOW)).toMatchObject({ voided: true });
  });

  it('is null when ECPay says it holds no invoice for it (RtnCode 2)', async () => {
    const fake = fakeEcpay(() => sealed({ RtnCode: 2, RtnMsg: '查無發票資料，請重新確認' }));
    expect(await provider(fake.fetch).query('ORDER1', NOW)).toBeNull();
  });

  it.each([
    ['any other RtnCode', { RtnCode: 9000001, RtnMsg: '呼叫財政部API失敗，請稍後再試' }],
    ['an answer about another RelateNumber', { ...QUERIED, IIS_Relate_Number: 'ORDER2' }],
    ['no void flag', { ...QUERIED, IIS_Invalid_Status: undefined }],
    ['no random code', { ...QUERIED, IIS_Random_Number: '' }],
    ['a date that is not one', { ...QUERIED, IIS_Create_Date: '2026-13-40 00:00:00' }],
  ])('%s is no answer: it may exist', async (_, answer) => {
    const fake = fakeEcpay(() => sealed(answer));
    await expect(provider(fake.fetch).query('ORDER1', NOW)).rejects.toThrow(EinvoiceUnanswered);
  });
});

describe('ECPay e-invoice: Invalid', () => {
  const VOID = {
    invoiceNumber: 'AB12345678',
    issuedAt: ISSUED_AT,
    reason: '退款：客戶取消訂閱並要求全額退費，已處理完畢',
  };

  it('posts the number, the Taiwan date it was issued on and the reason (at most 20 characters)', async () => {
    const fake = fakeEcpay(() => sealed({ RtnCode: 1, RtnMsg: '作廢發票成功', InvoiceNo: 'AB12345678' }));
    expect(await provider(fake.fetch).void(VOID, NOW)).toEqual({ status: 'voided' });
    expect(fake.calls[0]!.path).toBe('/B2CInvoice/Invalid');
    expect(fake.calls[0]!.inside).toEqual({
      MerchantID: '2000132',
      InvoiceNo: 'AB12345678',
      InvoiceDate: '2026-11-27',
      Reason: [...VOID.reason].slice(0, 20).join(''),
    });
  });

  it('an invoice ECPay says was voided already (5070453) is voided; other refusals are refusals', async () => {
    const again = fakeEcpay(() => sealed({ RtnCode: 5070453, RtnMsg: 'B2C作廢發票 該發票已被作廢過' }));
    expect(await provider(again.fetch).void(VOID, NOW)).toEqual({ status: 'voided' });
    const allowed = fakeEcpay(() => sealed({ RtnCode: 5070450, RtnMsg: 'B2C作廢發票 該發票已被折讓過' }));
    expect(await provider(allowed.fetch).void(VOID, NOW)).toEqual({
      status: 'refused',
      code: 'ecpay_5070450',
      message: 'B2C作廢發票 該發票已被折讓過',
    });
  });
});

describe('ECPay e-invoice: Allowance and GetAllowanceList', () => {
  const ALLOWANCE: AllowanceRequest = {
    invoiceNumber: 'AB12345678',
    issuedAt: ISSUED_AT,
    allowanceKey: 'refund1',
    knownAllowanceNumbers: ['2611270030051111'],
    buyer: { kind: 'member' },
    contact: { email: 'buyer@example.com', name: '王小明' },
    taxType: 'taxed',
    items: [{ description: 'Pro 月方案', quantity: 1, unitPrice: 100, amount: 100 }],
    total: 100,
    salesAmount: 100,
    taxAmount: 0,
  };
  const MADE = {
    RtnCode: 1,
    RtnMsg: '成功',
    IA_Allow_No: '2611270030052222',
    IA_Invoice_No: 'AB12345678',
    IA_Date: '2026-11-27 00:30:05',
    IA_Remain_Allowance_Amt: 199,
  };
  const row = (number: string, total: number, invalid: string | number = '0') => ({
    IA_Allow_No: number,
    IA_Invoice_No: 'AB12345678',
    IA_Date: '2026-11-27 00:31:00',
    IA_Invalid_Status: invalid,
    IA_Total_Amount: Math.round(total / 1.05),
    IA_Tax_Amount: total - Math.round(total / 1.05),
    IA_Total_Tax_Amount: total,
  });

  it('posts the invoice, its date, the amount, the items and a mailed notice (E) to the buyer, and reads IA_Allow_No', async () => {
    const fake = fakeEcpay(() => sealed(MADE));
    expect(await provider(fake.fetch).allowance(ALLOWANCE, NOW)).toEqual({
      status: 'issued',
      allowanceNumber: '2611270030052222',
    });
    expect(fake.calls.map((c) => c.path)).toEqual(['/B2CInvoice/Allowance']);
    expect(fake.calls[0]!.inside).toEqual({
      MerchantID: '2000132',
      InvoiceNo: 'AB12345678',
      InvoiceDate: '2026-11-27',
      AllowanceNotify: 'E',
      CustomerName: '王小明',
      NotifyMail: 'buyer@example.com',
      NotifyPhone: '',
      AllowanceAmount: 100,
      Items: [
        {
          ItemSeq: 1,
          ItemName: 'Pro 月方案',
          ItemCount: 1,
          ItemWord: '式',
          ItemPrice: 100,
          ItemTaxType: '1',
          ItemAmount: 100,
        },
      ],
    });
  });

  it('sends no notice (N) when there is no email, and answers a refusal as one', async () => {
    const fake = fakeEcpay(() => sealed({ RtnCode: 2000016, RtnMsg: '折讓金額有誤，請確認' }));
    const outcome = await provider(fake.fetch).allowance({ ...ALLOWANCE, contact: { email: null, name: null } }, NOW);
    expect(outcome).toEqual({ status: 'refused', code: 'ecpay_2000016', message: '折讓金額有誤，請確認' });
    expect(fake.calls[0]!.inside).toMatchObject({ AllowanceNotify: 'N', NotifyMail: '', CustomerName: '' });
  });

  it('findAllowance lists by invoice number and issue date (SearchType 1): the one unknown, live allowance of that total', async () => {
    const fake = fakeEcpay(() =>
      sealed({
        RtnCode: 1,
        RtnMsg: '查詢成功',
        AllowanceInfo: [
          row('2611270030051111', 100),
          row('2611270030053333', 100, '1'),
          row('2611270030054444', 50),
          row('2611270030052222', 100),
        ],
      }),
    );
    expect(await provider(fake.fetch).findAllowance(ALLOWANCE, NOW)).toEqual({ allowanceNumber: '2611270030052222' });
    expect(fake.calls[0]!.path).toBe('/B2CInvoice/GetAllowanceList');
    expect(fake.calls[0]!.inside).toEqual({
      MerchantID: '2000132',
      SearchType: '1',
      InvoiceNo: 'AB12345678',
      Date: '2026-11-27',
    });
  });

  it('findAllowance is null when ECPay lists none (RtnCode 7) or none unknown; reads one allowance given flat', async () => {
    const none = fakeEcpay(() => sealed({ RtnCode: 7, RtnMsg: '查無資料' }));
    expect(await provider(none.fetch).findAllowance(ALLOWANCE, NOW)).toBeNull();
    const known = fakeEcpay(() => sealed({ RtnCode: 1, RtnMsg: '', AllowanceInfo: [row('2611270030051111', 100)] }));
    expect(await provider(known.fetch).findAllowance(ALLOWANCE, NOW)).toBeNull();
    const flat = fakeEcpay(() => sealed({ RtnCode: 1, RtnMsg: '', ...row('2611270030052222', 100) }));
    expect(await provider(flat.fetch).findAllowance(ALLOWANCE, NOW)).toEqual({ allowanceNumber: '2611270030052222' });
  });

  it.each([
    [
      'two unknown allowances of that total',
      { RtnCode: 1, AllowanceInfo: [row('2611270030052222', 100), row('2611270030053333', 100)] },
    ],
    ['any other RtnCode', { RtnCode: 9000001, RtnMsg: '呼叫財政部API失敗' }],
    [
      'an allowance of another invoice',
      { RtnCode: 1, AllowanceInfo: [{ ...row('2611270030052222', 100), IA_Invoice_No: 'AB00000000' }] },
    ],
    ['an allowance number that is not one', { RtnCode: 1, AllowanceInfo: [row('12', 100)] }],
  ])('findAllowance cannot say with %s', async (_, answer) => {
    const fake = fakeEcpay(() => sealed(answer));
    await expect(provider(fake.fetch).findAllowance(ALLOWANCE, NOW)).rejects.toThrow(EinvoiceUnanswered);
  });

  it("when the allowance's answer is lost, lists the invoice's allowances: the one unknown allowance of that total is it", async () => {
    const fake = fakeEcpay((path) =>
      path === '/B2CInvoice/Allowance'
        ? new Response('bad gateway', { status: 502 })
        : sealed({ RtnCode: 1, AllowanceInfo: [row('2611270030051111', 100), row('2611270030052222', 100)] }),
    );
    expect(await provider(fake.fetch).allowance(ALLOWANCE, NOW)).toEqual({
      status: 'issued',
      allowanceNumber: '2611270030052222',
    });
    expect(fake.calls.map((c) => c.path)).toEqual(['/B2CInvoice/Allowance', '/B2CInvoice/GetAllowanceList']);
  });

  it("when the allowance's answer is lost and the list shows none (or cannot be read), it stays unanswered", async () => {
    for (const listed of [
      { RtnCode: 7, RtnMsg: '查無資料' },
      { RtnCode: 9000001, RtnMsg: 'busy' },
    ]) {
      const fake = fakeEcpay((path) =>
        path === '/B2CInvoice/Allowance' ? new Response('', { status: 500 }) : sealed(listed),
      );
      await expect(provider(fake.fetch).allowance(ALLOWANCE, NOW)).rejects.toThrow('HTTP 500');
    }
  });
});

describe('ECPay e-invoice: answers that cannot be trusted are EinvoiceUnanswered', () => {
  const secrets = [MERCHANT.hashKey, MERCHANT.hashIV, CARRIER];

  it.each([
    ['HTTP 500', () => fakeEcpay(() => sealed(ISSUED), 500).fetch, 'HTTP 500'],
    ['HTTP 403 (ECPay limits callers that ask too fast)', () => fakeEcpay(() => 'Forbidden', 403).fetch, 'HTTP 403'],
    [
      'a network error',
      () => (async () => Promise.reject(new TypeError('fetch failed'))) as typeof fetch,
      'fetch failed',
    ],
    ['an answer that is not JSON', () => fakeEcpay(() => '<html>error</html>').fetch, 'not JSON'],
    ['a JSON answer that is not an object', () => fakeEcpay(() => 'null').fetch, 'not an object'],
    [
      'TransCode 110 (ECPay could not decrypt the request)',
      () =>
        fakeEcpay(() => ({
          MerchantID: '2000132',
          TransCode: 110,
          TransMsg: 'The parameter [Data] decrypt fail.',
          Data: null,
        })).fetch,
      'TransCode 110',
    ],
    ['TransCode 1 with no Data', () => fakeEcpay(() => ({ ...sealed(ISSUED), Data: null })).fetch, 'no Data'],
    [
      'a Data that does not decrypt under our keys',
      () => fakeEcpay(() => sealed(ISSUED, { ...MERCHANT, hashKey: 'abcdefghijklmnop' })).fetch,
      'answer:',
    ],
    [
      'an answer for another merchant',
      () => fakeEcpay(() => ({ ...sealed(ISSUED), MerchantID: '3002607' })).fetch,
      'another merchant',
    ],
    ['a Data without RtnCode', () => fakeEcpay(() => sealed({ RtnMsg: 'ok' })).fetch, 'no RtnCode'],
    [
      'a Data whose RtnCode is not a number',
      () => fakeEcpay(() => sealed({ ...ISSUED, RtnCode: true })).fetch,
      'no RtnCode',
    ],
    [
      'a success without a readable invoice',
      () => fakeEcpay(() => sealed({ ...ISSUED, InvoiceNo: 'AB123' })).fetch,
      'cannot read',
    ],
  ])('%s: the invoice may have been issued', async (_, fetchOf, message) => {
    const issue = provider(fetchOf()).issue({ ...REQUEST, buyer: { kind: 'mobile_barcode', carrier: CARRIER } }, NOW);
    await expect(issue).rejects.toThrow(EinvoiceUnanswered);
    const error = (await issue.catch((e: Error) => e)) as Error;
    expect(error.message).toContain(message);
    for (const secret of secrets) expect(error.message).not.toContain(secret);
  });

  it('an ECPay that does not answer in time (20 s unless told) is unanswered', async () => {
    const hanging: typeof fetch = (_, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal!.reason)));
    await expect(provider(hanging, { timeoutMs: 20 }).issue(REQUEST, NOW)).rejects.toThrow(EinvoiceUnanswered);
  });

  it('refuses keys that are not 16 bytes when it is made', () => {
    expect(() => ecpayEinvoiceProvider({ ...MERCHANT, hashKey: 'short' })).toThrow(RangeError);
  });
});
