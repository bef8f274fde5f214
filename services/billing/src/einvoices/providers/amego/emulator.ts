import { randomInt } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type EmulatedFailure, failureQueue, loseAnswer, serveLocally } from '../emulator-server';
import { type AmegoMerchant, amegoDate, amegoTimeOfDay } from './merchant';
import { hasValidAmegoSign } from './sign';

/**
 * Amego's e-invoice API as its documents describe it (docs/decisions/0022), for tests and for a
 * Sandbox pointed at it: the signed form (統編, ±60 s, md5 sign), f0401 with Amego's amount checks
 * and a refusal of an OrderId used before (3040171), f0501, g0401 refusing more than the invoice
 * has left (4040171/4040173), invoice_query by order or number, allowance_status. Written from the
 * documents, not from Amego's behaviour: it checks what they say Amego checks, with their codes,
 * and nothing they are silent on. g0401 and its errors answer `code` as a string, as Amego's does.
 */
export interface AmegoEmulator {
  url: string;
  /** The invoices issued, by OrderId. */
  invoices: Map<string, EmulatedAmegoInvoice>;
  /** The allowances issued, by AllowanceNumber. */
  allowances: Map<string, EmulatedAmegoAllowance>;
  /** Every call that reached an endpoint, with the code answered (or that would have been, for a lost answer). */
  calls: { path: string; data: unknown; code: number | string; lost?: 'drop' | 'http500' }[];
  /**
   * The next call on `path` goes wrong: `drop` acts on it and closes the connection unanswered,
   * `http500` acts on it and answers HTTP 500, `refuse` answers code 10 (系統停機維護中) without
   * acting. Several calls queue that many failures, in order.
   */
  failNext(path: string, how: EmulatedFailure): void;
  close(): Promise<void>;
}

export interface EmulatedAmegoInvoice {
  orderId: string;
  invoiceNumber: string;
  randomNumber: string;
  issuedAt: Date;
  /** f0401's data as posted. */
  data: Record<string, unknown>;
  voidedAt: Date | null;
}

export interface EmulatedAmegoAllowance {
  allowanceNumber: string;
  invoiceNumber: string;
  allowanceDate: string;
  /** Tax exclusive, as g0401 carries it. */
  totalAmount: number;
  taxAmount: number;
  /** g0401's record as posted. */
  data: Record<string, unknown>;
}

type Answer = { code: number | string; msg: string; [field: string]: unknown };

const CONSUMER = '0000000000';
const INVOICE_NUMBER = /^[A-Z]{2}\d{8}$/;
const CARRIER_ID: Record<string, RegExp> = {
  '3J0002': /^\/[0-9A-Z+\-.]{7}$/,
  CQ0001: /^[A-Z]{2}\d{14}$/,
  amego: /^(a09\d{8}|[^@\s]+@[^@\s]+\.[^@\s]+)$/,
};

const ok = (fields: Record<string, unknown> = {}): Answer => ({ code: 0, msg: '', ...fields });
const fail = (code: number | string, msg: string): Answer => ({ code, msg });
const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === 'object' && !Array.isArray(value);
const numeric = (value: unknown) =>
  (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value));
const text = (value: unknown) => (typeof value === 'string' ? value : '');

export async function startAmegoEinvoiceEmulator(
  merchant: Omit<AmegoMerchant, 'baseUrl'>,
  now: () => Date = () => new Date(),
): Promise<AmegoEmulator> {
  const invoices = new Map<string, EmulatedAmegoInvoice>();
  const allowances = new Map<string, EmulatedAmegoAllowance>();
  const calls: AmegoEmulator['calls'] = [];
  const failures = failureQueue();
  let nextNumber = 12345678;

  const byNumber = (invoiceNumber: string) => [...invoices.values()].find((i) => i.invoiceNumber === invoiceNumber);
  const allowancesOf = (invoiceNumber: string) =>
    [...allowances.values()].filter((a) => a.invoiceNumber === invoiceNumber);

  /** The common checks of every call (通用錯誤): 統編, time within 60 s, sign, data. */
  function formRefusal(form: Record<string, string>): Answer | null {
    if (!form.invoice) return fail(11, 'invoice 不可為空');
    if (form.invoice !== merchant.sellerTaxId) return fail(12, 'invoice 錯誤');
    const skew = Math.abs(now().getTime() / 1000 - Number(form.time));
    if (!/^\d{10}$/.test(form.time ?? '') || !(skew <= 60)) return fail(15, 'Time 錯誤');
    if (!hasValidAmegoSign(form, merchant.appKey)) return fail(16, '簽名驗證錯誤');
    if (!form.data) return fail(17, '資料不可為空');
    return null;
  }

  /** f0401 開立發票 (自動配號). */
  function issue(data: unknown): Answer {
    if (!isObject(data)) return fail(3040112, '此 API 只支援單張，data 應為物件字串');
    const orderId = text(data.OrderId);
    if (!orderId || orderId.length > 40) return fail(3040153, 'OrderId 不可為空或過長');
    if (invoices.has(orderId)) return fail(3040171, 'OrderId 重複');
    const buyerId = text(data.BuyerIdentifier);
    if (buyerId.length !== 8 && buyerId !== CONSUMER) return fail(3040121, 'BuyerIdentifier 字數錯誤');
    if (!/^\d+$/.test(buyerId)) return fail(3040122, 'BuyerIdentifier 格式錯誤');
    const buyerName = text(data.BuyerName);
    if (!buyerName || /^0{1,4}$/.test(buyerName) || buyerName.length > 60) {
      return fail(3040123, 'BuyerName 不可為空或過長');
    }
    const carrierType = text(data.CarrierType);
    if (carrierType) {
      const [id1, id2] = [text(data.CarrierId1), text(data.CarrierId2)];
      if (!id1 || !id2) return fail(3040135, '載具顯碼或隱碼不可為空');
      if (id1 !== id2) return fail(3040131, '載具顯碼、隱碼不相符');
      if (!CARRIER_ID[carrierType]?.test(id1)) return fail(3040134, 'CarrierId1 載具顯碼錯誤');
    }
    const npoban = text(data.NPOBAN);
    if (npoban && !/^\d{3,7}$/.test(npoban)) return fail(3040136, 'NPOBAN 格式錯誤');
    const items = data.ProductItem;
    if (!Array.isArray(items) || items.length === 0 || items.length > 9999) {
      return fail(3040138, 'ProductItem 不可為空或過多');
    }
    const sums = { 1: 0, 2: 0, 3: 0 } as Record<number, number>;
    for (const [i, item] of items.entries()) {
      const n = i + 1;
      if (!isObject(item)) return fail(3040138, 'ProductItem 不可為空或過多');
      const description = text(item.Description);
      if (!description || description.length > 256) return fail(3040139, `第${n}品項 Description 不可為空或過長`);
      if (!numeric(item.Quantity)) return fail(3040140, `第${n}品項 Quantity 格式錯誤`);
      if (!numeric(item.UnitPrice)) return fail(3040141, `第${n}品項 UnitPrice 格式錯誤`);
      if (!numeric(item.Amount)) return fail(3040142, `第${n}品項 Amount 格式錯誤`);
      const taxType = Number(item.TaxType);
      if (![1, 2, 3].includes(taxType)) return fail(3040144, `第${n}品項 TaxType 錯誤`);
      if (Math.abs(Number(item.Quantity) * Number(item.UnitPrice) - Number(item.Amount)) > 1e-6) {
        return fail(3040172, `第${n}品項 Amount 金額錯誤`);
      }
      sums[taxType]! += Number(item.Amount);
    }
    for (const [field, code] of [
      ['SalesAmount', 3040145],
      ['FreeTaxSalesAmount', 3040146],
      ['ZeroTaxSalesAmount', 3040147],
      ['TaxType', 3040148],
      ['TaxRate', 3040149],
      ['TaxAmount', 3040150],
      ['TotalAmount', 3040151],
    ] as const) {
      if (!numeric(data[field])) return fail(code, `${field} 格式錯誤`);
    }
    const types = new Set(items.map((item) => Number((item as Record<string, unknown>).TaxType)));
    const invoiceTaxType = types.size === 1 ? [...types][0] : 9;
    if (Number(data.TaxType) !== invoiceTaxType) return fail(3040173, 'TaxType 設定錯誤');
    // 金額計算 (api_doc): tax-included lines; only a company's invoice splits out the tax.
    const company = buyerId !== CONSUMER;
    const untaxedLines = Number(data.DetailVat ?? 1) === 0;
    if (untaxedLines && !company) return fail(3040162, '只有打統編發票， 才可以用未稅單價及小計');
    const taxed = Math.round(sums[1]!);
    const tax = !company ? 0 : untaxedLines ? Math.round(taxed * 0.05) : taxed - Math.round(taxed / 1.05);
    const sales = untaxedLines ? taxed : taxed - tax;
    const zero = Math.round(sums[2]!);
    const free = Math.round(sums[3]!);
    if (Number(data.TaxAmount) !== tax) return fail(3040177, 'TaxAmount 計算錯誤');
    if (Number(data.SalesAmount) !== sales) return fail(3040174, 'SalesAmount 計算錯誤');
    if (Number(data.ZeroTaxSalesAmount) !== zero) return fail(3040175, 'ZeroTaxSalesAmount 計算錯誤');
    if (Number(data.FreeTaxSalesAmount) !== free) return fail(3040176, 'FreeTaxSalesAmount 計算錯誤');
    if (Number(data.TotalAmount) !== sales + zero + free + tax) return fail(3040178, 'TotalAmount 計算錯誤');
    if (invoiceTaxType === 2) {
      if (data.CustomsClearanceMark === undefined || data.CustomsClearanceMark === '') {
        return fail(3040179, '若為零稅率發票，通關方式註記必填');
      }
      if (![1, 2].includes(Number(data.CustomsClearanceMark))) return fail(3040180, '通關方式註記錯誤');
    }
    const issuedAt = new Date(Math.floor(now().getTime() / 1000) * 1000);
    const invoice: EmulatedAmegoInvoice = {
      orderId,
      invoiceNumber: `AB${String(nextNumber++).padStart(8, '0')}`,
      randomNumber: String(randomInt(10_000)).padStart(4, '0'),
      issuedAt,
      data,
      voidedAt: null,
    };
    invoices.set(orderId, invoice);
    return ok({
      invoice_number: invoice.invoiceNumber,
      invoice_time: issuedAt.getTime() / 1000,
      random_number: invoice.randomNumber,
      barcode: `${amegoDate(issuedAt).slice(0, 6)}${invoice.invoiceNumber}${invoice.randomNumber}`,
      qrcode_left: '',
      qrcode_right: '',
    });
  }

  /** f0501 作廢發票: all the numbers given, or none. */
  function voidInvoices(data: unknown): Answer {
    if (!Array.isArray(data)) return fail(3050112, '此 API 支援多張，data 應為陣列字串');
    const found: EmulatedAmegoInvoice[] = [];
    for (const [i, record] of data.entries()) {
      const number = isObject(record) ? text(record.CancelInvoiceNumber) : '';
      if (!INVOICE_NUMBER.test(number)) return fail(3050111, `第${i + 1}筆 CancelInvoiceNumber 錯誤`);
      const invoice = byNumber(number);
      if (!invoice) return fail(3050125, `${number} 發票不存在`);
      if (invoice.voidedAt) return fail(3050122, `${number} 已存在開立作廢`);
      if (allowancesOf(number).length > 0) return fail(3050141, `${number} 已存在折讓單`);
      found.push(invoice);
    }
    for (const invoice of found) invoice.voidedAt = now();
    return ok();
  }

  /** g0401 開立折讓: every record checked before any is kept; codes answered as strings. */
  function issueAllowances(data: unknown): Answer {
    if (!Array.isArray(data)) return fail('4040112', '此 API 支援多張，data 應為陣列字串');
    const accepted: EmulatedAmegoAllowance[] = [];
    for (const [i, record] of data.entries()) {
      const n = `第${i + 1}筆`;
      if (!isObject(record)) return fail('4040131', `${n} ProductItem 錯誤`);
      const number = text(record.AllowanceNumber);
      if (!number || number.length > 16) return fail('4040121', `${n} AllowanceNumber 不可為空值或超過 16 字`);
      if (!/^\d{8}$/.test(String(record.AllowanceDate ?? ''))) return fail('4040122', `${n} AllowanceDate 錯誤`);
      if (![1, 2].includes(Number(record.AllowanceType))) return fail('4040123', `${n} AllowanceType 錯誤`);
      const buyerId = text(record.BuyerIdentifier);
      if (buyerId !== CONSUMER && !/^\d{8}$/.test(buyerId)) return fail('4040126', `${n} BuyerIdentifier 錯誤`);
      if (!text(record.BuyerName)) return fail('4040127', `${n} BuyerName 錯誤`);
      const items = record.ProductItem;
      if (!Array.isArray(items) || items.length === 0) return fail('4040131', `${n} ProductItem 錯誤`);
      let [amounts, taxes] = [0, 0];
      const originals = new Set<string>();
      for (const [j, item] of items.entries()) {
        const m = `${n} 第${j + 1}品項`;
        if (!isObject(item)) return fail('4040131', `${n} ProductItem 錯誤`);
        const original = text(item.OriginalInvoiceNumber);
        if (!INVOICE_NUMBER.test(original)) return fail('4040124', `${n} OriginalInvoiceNumber 錯誤`);
        originals.add(original);
        if (originals.size > 1) return fail('4040132', `${m} 目前僅支援一張折讓單折讓同一張發票`);
        if (!/^\d{8}$/.test(String(item.OriginalInvoiceDate ?? ''))) {
          return fail('4040125', `${n} OriginalInvoiceDate 錯誤`);
        }
        if (!text(item.OriginalDescription)) return fail('4040134', `${m} OriginalDescription 錯誤`);
        if (!numeric(item.Quantity)) return fail('4040135', `${m} Quantity 錯誤`);
        if (!numeric(item.UnitPrice)) return fail('4040136', `${m} UnitPrice 錯誤`);
        if (!numeric(item.Amount)) return fail('4040137', `${m} Amount 錯誤`);
        if (!numeric(item.Tax)) return fail('4040138', `${m} Tax 錯誤`);
        if (!Number.isInteger(Number(item.Tax))) return fail('4040139', `${m} Tax 必須為整數`);
        if (![1, 2, 3].includes(Number(item.TaxType))) return fail('4040140', `${n} TaxType 錯誤`);
        amounts += Number(item.Amount);
        taxes += Number(item.Tax);
      }
      if (Number(record.TaxAmount) !== taxes) return fail('4040141', `${n} TaxAmount 錯誤`);
      if (Math.abs(Number(record.TotalAmount) - amounts) > 1e-6) return fail('4040142', `${n} TotalAmount 錯誤`);
      const [originalNumber] = originals;
      const invoice = byNumber(originalNumber!);
      if (!invoice) return fail('4040156', `${originalNumber} 原發票不存在`);
      const originalDate = String((items[0] as Record<string, unknown>).OriginalInvoiceDate);
      if (originalDate !== amegoDate(invoice.issuedAt)) return fail('4040151', `${originalNumber} 原發票日期錯誤`);
      if (invoice.voidedAt) return fail('4040153', `${originalNumber} 已存在開立作廢`);
      if (allowances.has(number) || accepted.some((a) => a.allowanceNumber === number)) {
        return fail('4040161', `${number} 已存在折讓開立`);
      }
      const amount = Number(record.TotalAmount) + Number(record.TaxAmount);
      const invoiceTotal = Number(invoice.data.TotalAmount);
      const before = [...allowancesOf(originalNumber!), ...accepted.filter((a) => a.invoiceNumber === originalNumber)]
        .map((a) => a.totalAmount + a.taxAmount)
        .reduce((sum, value) => sum + value, 0);
      if (amount > invoiceTotal) return fail('4040171', `${n} 此折讓單折讓金額已大於原發票的開立金額`);
      if (before + amount > invoiceTotal) {
        return fail('4040173', `${n} 此折讓單加上其他同發票折讓單的折讓金額已大於原發票的開立金額`);
      }
      accepted.push({
        allowanceNumber: number,
        invoiceNumber: originalNumber!,
        allowanceDate: String(record.AllowanceDate),
        totalAmount: Number(record.TotalAmount),
        taxAmount: Number(record.TaxAmount),
        data: record,
      });
    }
    for (const allowance of accepted) allowances.set(allowance.allowanceNumber, allowance);
    return ok();
  }

  /** invoice_query 發票查詢, by `type` order (order_id) or invoice (invoice_number). */
  function query(data: unknown): Answer {
    if (!isObject(data) || (data.type !== 'order' && data.type !== 'invoice')) return fail(31, 'type 查詢類型不存在');
    let invoice: EmulatedAmegoInvoice | undefined;
    if (data.type === 'order') {
      const orderId = text(data.order_id);
      if (!orderId || orderId.length > 40) return fail(32, 'order_id 不可為空或過長');
      invoice = invoices.get(orderId);
    } else {
      const number = text(data.invoice_number);
      if (!INVOICE_NUMBER.test(number)) return fail(33, 'invoice_number 不可為空或格式錯誤');
      invoice = byNumber(number);
    }
    if (!invoice) return fail(71, '查無資料');
    const d = invoice.data;
    const company = text(d.BuyerIdentifier) !== CONSUMER;
    return ok({
      data: {
        invoice_number: invoice.invoiceNumber,
        invoice_type: invoice.voidedAt ? 'C0501' : company ? 'A0401' : 'C0401',
        invoice_status: 1,
        invoice_date: Number(amegoDate(invoice.issuedAt)),
        invoice_time: amegoTimeOfDay(invoice.issuedAt),
        buyer_identifier: d.BuyerIdentifier,
        buyer_name: d.BuyerName,
        buyer_email_address: d.BuyerEmailAddress ?? '',
        sales_amount: Number(d.SalesAmount),
        free_tax_sales_amount: Number(d.FreeTaxSalesAmount),
        zero_tax_sales_amount: Number(d.ZeroTaxSalesAmount),
        tax_type: Number(d.TaxType),
        tax_rate: String(d.TaxRate),
        tax_amount: Number(d.TaxAmount),
        total_amount: Number(d.TotalAmount),
        random_number: invoice.randomNumber,
        carrier_type: d.CarrierType ?? '',
        carrier_id1: d.CarrierId1 ?? '',
        carrier_id2: d.CarrierId2 ?? '',
        npoban: d.NPOBAN ?? '',
        cancel_date: invoice.voidedAt ? Math.floor(invoice.voidedAt.getTime() / 1000) : 0,
        order_id: invoice.orderId,
        detail_vat: Number(d.DetailVat ?? 1),
        create_date: invoice.issuedAt.getTime() / 1000,
        product_item: (d.ProductItem as Record<string, unknown>[]).map((item) => ({
          tax_type: Number(item.TaxType),
          description: item.Description,
          unit_price: Number(item.UnitPrice),
          quantity: Number(item.Quantity),
          amount: Number(item.Amount),
        })),
        wait: [],
        allowance: allowancesOf(invoice.invoiceNumber).map((a) => ({
          invoice_type: company ? 'B0401' : 'D0401',
          invoice_status: 1,
          allowance_type: Number(a.data.AllowanceType),
          allowance_number: a.allowanceNumber,
          allowance_date: Number(a.allowanceDate),
          tax_amount: a.taxAmount,
          total_amount: a.totalAmount,
        })),
      },
    });
  }

  /** allowance_status 折讓狀態: a number Amego does not know is `NOT_FOUND`, with code 0. */
  function allowanceStatus(data: unknown): Answer {
    if (!Array.isArray(data)) return fail(23, '此 API 支援多筆資料，data 欄位應為陣列字串');
    const rows = [];
    for (const [i, record] of data.entries()) {
      const number = isObject(record) ? text(record.AllowanceNumber) : '';
      if (!number) return fail(99, `第${i + 1}筆 AllowanceNumber 錯誤`);
      const allowance = allowances.get(number);
      const company = allowance && text(allowance.data.BuyerIdentifier) !== CONSUMER;
      rows.push({
        allowance_number: number,
        type: !allowance ? 'NOT_FOUND' : company ? 'B0401' : 'D0401',
        status: allowance ? 1 : -1,
        tax_amount: allowance?.taxAmount ?? 0,
        total_amount: allowance?.totalAmount ?? 0,
      });
    }
    return ok({ data: rows });
  }

  const endpoints: Record<string, (data: unknown) => Answer> = {
    '/json/f0401': issue,
    '/json/f0501': voidInvoices,
    '/json/g0401': issueAllowances,
    '/json/invoice_query': query,
    '/json/allowance_status': allowanceStatus,
  };

  function answer(path: string, form: Record<string, string>, how: 'drop' | 'http500' | undefined): Answer {
    let data: unknown = form.data;
    const refusal = formRefusal(form);
    if (refusal) {
      calls.push({ path, data, code: refusal.code, ...(how ? { lost: how } : {}) });
      return refusal;
    }
    let result: Answer;
    try {
      data = JSON.parse(form.data!);
    } catch {
      data = undefined;
    }
    result = data === undefined ? fail(20, 'data 非 JSON 字串格式') : endpoints[path]!(data);
    calls.push({ path, data, code: result.code, ...(how ? { lost: how } : {}) });
    return result;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    if (!endpoints[path]) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    if (req.method !== 'POST') return void res.writeHead(405, { 'content-type': 'text/plain' }).end('POST only');
    const form = Object.fromEntries(new URLSearchParams(await bodyOf(req)));
    const failure = failures.take(path);
    if (failure === 'refuse') {
      const refusal = fail(10, '系統停機維護中');
      calls.push({ path, data: form.data, code: refusal.code });
      return json(res, refusal);
    }
    const result = answer(path, form, failure);
    if (loseAnswer(res, failure)) return;
    json(res, result);
  }

  const server = await serveLocally(handle);
  return {
    url: server.url,
    invoices,
    allowances,
    calls,
    failNext: failures.failNext,
    close: server.close,
  };
}

function json(res: ServerResponse, body: Answer): void {
  res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
