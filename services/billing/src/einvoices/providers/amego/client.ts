import { createHash } from 'node:crypto';
import {
  type AllowanceOutcome,
  type AllowanceRequest,
  type EinvoiceBuyer,
  type EinvoiceItem,
  type EinvoiceProvider,
  type EinvoiceTaxType,
  EinvoiceUnanswered,
  type IssueOutcome,
  type IssueRequest,
  type QueriedEinvoice,
  type VoidOutcome,
  type VoidRequest,
} from '../port';
import { type AmegoMerchant, amegoDate, parseAmegoDateTime } from './merchant';
import { amegoForm } from './sign';

/** The endpoints used (MIG 4.0 paths, in use since 2025-01-01; the older c0401/c0501/d0401 still answer). */
export const AMEGO_PATHS = {
  issue: '/json/f0401',
  void: '/json/f0501',
  allowance: '/json/g0401',
  query: '/json/invoice_query',
  allowanceStatus: '/json/allowance_status',
} as const;

/** Amego's answer codes the adapter reads (its error table, invoice.amego.tw/info_detail?mid=71). */
export const AMEGO_CODES = {
  ok: 0,
  /** invoice_query: 查無資料. */
  notFound: 71,
  /** f0401: OrderId 重複 (or the order is being cancelled and reissued). */
  orderIdUsed: 3040171,
  /** f0501: 指定發票號碼 已存在開立作廢 (already voided). */
  alreadyVoided: 3050122,
  /** f0501: 指定發票號碼 等待 開立/作廢/註銷 (a change is scheduled). */
  changePending: 3050131,
  /** g0401: 指定折讓單號 已存在折讓開立 (the AllowanceNumber is taken). */
  allowanceNumberUsed: 4040161,
} as const;

/** What Amego requires of a zero-rated invoice (f0401 refuses one without them, code 3040179). */
export type AmegoZeroRated = {
  /** 通關方式註記: 1 非經海關出口, 2 經海關出口. */
  customsClearanceMark: 1 | 2;
  /** 零稅率原因 71-79 (營業稅法第七條各款). */
  zeroTaxRateReason: number;
};

export type AmegoProviderOptions = {
  fetch?: typeof fetch;
  /** How long one call may take before it counts as unanswered; 20 s by default. */
  timeoutMs?: number;
  /**
   * Sent with zero-rated invoices. By default services used abroad, not through customs
   * (mark 1, reason 72: 與外銷有關之勞務，或在國內提供而在國外使用之勞務), what a subscription is.
   */
  zeroRated?: AmegoZeroRated;
};

/** An allowance Amego holds, not voided, under the number of a request's key (allowance_status). */
export type AmegoAllowanceFound = { allowanceNumber: string };

export interface AmegoEinvoiceProvider extends EinvoiceProvider {
  readonly name: 'amego';
  /**
   * The allowance Amego holds for the request's `allowanceKey` (the number it maps to), or null
   * when it has none or it was voided: for a caller whose `allowance` went unanswered, before it
   * asks again. `allowance` itself also answers `issued` when Amego says the number is taken and
   * this finds it.
   */
  findAllowance(request: Pick<AllowanceRequest, 'allowanceKey'>, now: Date): Promise<AmegoAllowanceFound | null>;
}

const DEFAULT_ZERO_RATED: AmegoZeroRated = { customsClearanceMark: 1, zeroTaxRateReason: 72 };
const TAX_TYPE: Record<EinvoiceTaxType, 1 | 2 | 3> = { taxed: 1, zero_rated: 2, exempt: 3 };
const CONSUMER = '0000000000';
/** MIG message types that mean an invoice is no longer valid: voided (x0501) or cancelled for reissue (x0701). */
const VOIDED_TYPE = /^[ACF]0[57]01$/;

/**
 * Amego takes the merchant's own AllowanceNumber, at most 16 characters; the platform's key may
 * have 30. A key that fits is sent as it is; a longer one as `K` and 15 hex digits of its SHA-256,
 * so that the same key always asks for the same number (Amego refuses a number twice).
 */
export function amegoAllowanceNumber(allowanceKey: string): string {
  if (/^[A-Za-z0-9]{1,16}$/.test(allowanceKey)) return allowanceKey;
  return `K${createHash('sha256').update(allowanceKey, 'utf8').digest('hex').slice(0, 15).toUpperCase()}`;
}

/**
 * Amego's e-invoice API (光貿電子發票, invoice-api.amego.tw) behind the port: f0401 issues,
 * invoice_query reads by OrderId, f0501 voids and g0401 issues allowances. docs/decisions/0022
 * names the documents each field comes from.
 */
export function amegoEinvoiceProvider(
  merchant: AmegoMerchant,
  options: AmegoProviderOptions = {},
): AmegoEinvoiceProvider {
  const zeroRated = options.zeroRated ?? DEFAULT_ZERO_RATED;
  const call = (path: string, data: unknown, now: Date) => post(merchant, path, data, now, options);

  async function queryBy(data: Record<string, string>, now: Date): Promise<QueriedEinvoice | null> {
    const answer = await call(AMEGO_PATHS.query, data, now);
    if (answer.code === AMEGO_CODES.notFound) return null;
    if (answer.code !== AMEGO_CODES.ok) {
      throw new EinvoiceUnanswered(`Amego ${AMEGO_PATHS.query} answered code ${answer.code}: ${answer.msg}`);
    }
    return queriedOf(answer.body.data, data);
  }

  async function findAllowance(
    request: Pick<AllowanceRequest, 'allowanceKey'>,
    now: Date,
  ): Promise<AmegoAllowanceFound | null> {
    const allowanceNumber = amegoAllowanceNumber(request.allowanceKey);
    const answer = await call(AMEGO_PATHS.allowanceStatus, [{ AllowanceNumber: allowanceNumber }], now);
    if (answer.code !== AMEGO_CODES.ok) {
      throw new EinvoiceUnanswered(`Amego ${AMEGO_PATHS.allowanceStatus} answered code ${answer.code}: ${answer.msg}`);
    }
    const row = Array.isArray(answer.body.data)
      ? (answer.body.data[0] as Record<string, unknown> | undefined)
      : undefined;
    const type = typeof row?.type === 'string' ? row.type : '';
    if (!row || (row.allowance_number !== undefined && String(row.allowance_number) !== allowanceNumber)) {
      throw new EinvoiceUnanswered(`Amego ${AMEGO_PATHS.allowanceStatus} answered about another allowance`);
    }
    if (type === 'NOT_FOUND' || /^[BDG]0501$/.test(type)) return null;
    if (/^[BDG]0401$/.test(type)) return { allowanceNumber };
    throw new EinvoiceUnanswered(`Amego ${AMEGO_PATHS.allowanceStatus} answered type ${type || 'none'}`);
  }

  return {
    name: 'amego',

    async issue(request: IssueRequest, now: Date): Promise<IssueOutcome> {
      const buyer = buyerFields(request.buyer, request.contact);
      if ('refused' in buyer) return buyer.refused;
      const answer = await call(AMEGO_PATHS.issue, issueData(request, buyer.fields, zeroRated), now);
      if (answer.code === AMEGO_CODES.ok) return { status: 'issued', ...issuedOf(answer.body) };
      if (answer.code === AMEGO_CODES.orderIdUsed) {
        // An earlier ask (whose answer was lost) issued it: answer with that invoice, exactly once.
        const existing = await queryBy({ type: 'order', order_id: request.merchantOrderNo }, now);
        if (existing && !existing.voided) {
          const { voided: _voided, ...invoice } = existing;
          return { status: 'issued', ...invoice };
        }
        if (existing) {
          return refused(answer.code, `${answer.msg} (its invoice ${existing.invoiceNumber} was voided)`);
        }
      }
      return refused(answer.code, answer.msg);
    },

    query: (merchantOrderNo, now) => queryBy({ type: 'order', order_id: merchantOrderNo }, now),

    async void(request: VoidRequest, now: Date): Promise<VoidOutcome> {
      // f0501 takes the numbers only: Amego has no field for the reason.
      const answer = await call(AMEGO_PATHS.void, [{ CancelInvoiceNumber: request.invoiceNumber }], now);
      if (answer.code === AMEGO_CODES.ok || answer.code === AMEGO_CODES.alreadyVoided) return { status: 'voided' };
      if (answer.code === AMEGO_CODES.changePending) {
        // A void asked before (its answer lost) waits to be filed, or the issue itself does: the query tells.
        const invoice = await queryBy({ type: 'invoice', invoice_number: request.invoiceNumber }, now);
        if (invoice?.voided) return { status: 'voided' };
      }
      return refused(answer.code, answer.msg);
    },

    async allowance(request: AllowanceRequest, now: Date): Promise<AllowanceOutcome> {
      const allowanceNumber = amegoAllowanceNumber(request.allowanceKey);
      const data = [allowanceData(request, allowanceNumber, now)];
      const answer = await call(AMEGO_PATHS.allowance, data, now);
      if (answer.code === AMEGO_CODES.ok) return { status: 'issued', allowanceNumber };
      if (answer.code === AMEGO_CODES.allowanceNumberUsed) {
        // The number is this key's: an earlier ask whose answer was lost issued it.
        if (await findAllowance(request, now)) return { status: 'issued', allowanceNumber };
      }
      return refused(answer.code, answer.msg);
    },

    findAllowance,
  };
}

const refused = (code: number, message: string) => ({ status: 'refused', code: `amego_${code}`, message }) as const;

type BuyerFields = Record<string, string>;

/** Who the invoice is for: 統一編號 and name, the carrier (載具) or the donation (捐贈碼), and where Amego mails its notice. */
function buyerFields(
  buyer: EinvoiceBuyer,
  contact: IssueRequest['contact'],
): { fields: BuyerFields } | { refused: Extract<IssueOutcome, { status: 'refused' }> } {
  const email: BuyerFields = contact.email ? { BuyerEmailAddress: contact.email } : {};
  const consumer: BuyerFields = { BuyerIdentifier: CONSUMER, BuyerName: contact.name?.trim() || '消費者', ...email };
  switch (buyer.kind) {
    case 'company':
      return { fields: { BuyerIdentifier: buyer.taxId, BuyerName: buyer.companyName, ...email } };
    case 'member':
      // Amego's member carrier is the buyer's email (or a + mobile number); an email carrier is
      // not mailed, so the notice goes to BuyerEmailAddress as well.
      if (!contact.email) {
        return {
          refused: {
            status: 'refused',
            code: 'amego_member_needs_email',
            message: "Amego's member carrier is the buyer's email, and none is known",
          },
        };
      }
      return { fields: { ...consumer, CarrierType: 'amego', CarrierId1: contact.email, CarrierId2: contact.email } };
    case 'mobile_barcode':
      return { fields: { ...consumer, CarrierType: '3J0002', CarrierId1: buyer.carrier, CarrierId2: buyer.carrier } };
    case 'citizen_certificate':
      return { fields: { ...consumer, CarrierType: 'CQ0001', CarrierId1: buyer.carrier, CarrierId2: buyer.carrier } };
    case 'donation':
      return { fields: { ...consumer, NPOBAN: buyer.donationCode } };
  }
}

/**
 * f0401's data. The amounts are the caller's: for a taxed invoice SalesAmount and TaxAmount are
 * its salesAmount and taxAmount (a consumer's: the whole, tax included, and 0; a company's: the
 * split), the zero-rated or exempt whole goes to ZeroTaxSalesAmount or FreeTaxSalesAmount. Item
 * prices are tax included (DetailVat 1).
 */
function issueData(request: IssueRequest, buyer: BuyerFields, zeroRated: AmegoZeroRated): Record<string, unknown> {
  const taxType = TAX_TYPE[request.taxType];
  return {
    OrderId: request.merchantOrderNo,
    ...buyer,
    ProductItem: request.items.map((item) => ({
      Description: item.description,
      Quantity: item.quantity,
      UnitPrice: item.unitPrice,
      Amount: item.amount,
      TaxType: taxType,
    })),
    SalesAmount: taxType === 1 ? request.salesAmount : 0,
    FreeTaxSalesAmount: taxType === 3 ? request.salesAmount : 0,
    ZeroTaxSalesAmount: taxType === 2 ? request.salesAmount : 0,
    TaxType: taxType,
    TaxRate: taxType === 1 ? '0.05' : '0',
    TaxAmount: request.taxAmount,
    TotalAmount: request.total,
    DetailVat: 1,
    ...(taxType === 2
      ? { CustomsClearanceMark: zeroRated.customsClearanceMark, ZeroTaxRateReason: zeroRated.zeroTaxRateReason }
      : {}),
  };
}

/**
 * g0401's record (賣方開立折讓證明通知單, AllowanceType 2). Amego's allowance lines are tax
 * exclusive with each line's tax: the caller's taxAmount is shared among the lines in proportion
 * to their amounts (largest remainder, whole dollars), so the lines add up to its split exactly.
 */
function allowanceData(request: AllowanceRequest, allowanceNumber: string, now: Date): Record<string, unknown> {
  const itemsTotal = request.items.reduce((sum, item) => sum + item.amount, 0);
  if (request.items.length === 0 || itemsTotal !== request.total) {
    throw new RangeError(`allowance items add up to ${itemsTotal}, not its total ${request.total}`);
  }
  if (request.salesAmount + request.taxAmount !== request.total) {
    throw new RangeError(
      `allowance split ${request.salesAmount} + ${request.taxAmount} is not its total ${request.total}`,
    );
  }
  const taxType = TAX_TYPE[request.taxType];
  const taxes = shareOut(request.taxAmount, request.items);
  const company = request.buyer.kind === 'company' ? request.buyer : null;
  const originalDate = Number(amegoDate(request.issuedAt));
  return {
    AllowanceNumber: allowanceNumber,
    AllowanceDate: amegoDate(now),
    AllowanceType: 2,
    BuyerIdentifier: company?.taxId ?? CONSUMER,
    BuyerName: company?.companyName ?? (request.contact.name?.trim() || '消費者'),
    ...(request.contact.email ? { BuyerEmailAddress: request.contact.email } : {}),
    ProductItem: request.items.map((item, i) => {
      const amount = item.amount - taxes[i]!;
      return {
        OriginalInvoiceNumber: request.invoiceNumber,
        OriginalInvoiceDate: originalDate,
        OriginalDescription: item.description,
        Quantity: item.quantity,
        UnitPrice: Number((amount / item.quantity).toFixed(7)),
        Amount: amount,
        Tax: taxes[i]!,
        TaxType: taxType,
      };
    }),
    TaxAmount: request.taxAmount,
    TotalAmount: request.salesAmount,
  };
}

/** `total` in whole dollars, shared among the items in proportion to their amounts (largest remainder). */
function shareOut(total: number, items: EinvoiceItem[]): number[] {
  const whole = items.reduce((sum, item) => sum + item.amount, 0);
  if (whole === 0 || total === 0) return items.map(() => 0);
  const exact = items.map((item) => (total * item.amount) / whole);
  const shares = exact.map(Math.floor);
  let left = total - shares.reduce((sum, share) => sum + share, 0);
  const byRemainder = exact.map((value, i) => ({ i, rest: value - shares[i]! })).sort((a, b) => b.rest - a.rest);
  for (const { i } of byRemainder) {
    if (left <= 0) break;
    shares[i]! += 1;
    left -= 1;
  }
  return shares;
}

/** f0401's answer: the invoice number (2 letters, 8 digits), random code (4 digits) and issue time (unix seconds). */
function issuedOf(body: Record<string, unknown>): { invoiceNumber: string; randomCode: string; issuedAt: Date } {
  const invoiceNumber = String(body.invoice_number ?? '');
  const randomCode = String(body.random_number ?? '');
  const seconds = Number(body.invoice_time);
  if (!/^[A-Z]{2}\d{8}$/.test(invoiceNumber) || !/^\d{4}$/.test(randomCode) || !(seconds > 0)) {
    throw new EinvoiceUnanswered(`Amego ${AMEGO_PATHS.issue} answered code 0 without a well-formed invoice`);
  }
  return { invoiceNumber, randomCode, issuedAt: new Date(seconds * 1000) };
}

/** invoice_query's `data`: the invoice, its date (Taiwan time) and whether it was voided (now or by a void waiting to be filed). */
function queriedOf(data: unknown, asked: Record<string, string>): QueriedEinvoice {
  if (!data || typeof data !== 'object' || Array.isArray(data)) {
    throw new EinvoiceUnanswered(`Amego ${AMEGO_PATHS.query} answered code 0 without data`);
  }
  const fields = data as Record<string, unknown>;
  const invoiceNumber = String(fields.invoice_number ?? '');
  const randomCode = String(fields.random_number ?? '');
  const issuedAt = parseAmegoDateTime(fields.invoice_date, fields.invoice_time);
  if (!/^[A-Z]{2}\d{8}$/.test(invoiceNumber) || !/^\d{4}$/.test(randomCode) || !issuedAt) {
    throw new EinvoiceUnanswered(`Amego ${AMEGO_PATHS.query} answered an invoice without number, random code or date`);
  }
  const other =
    (asked.order_id !== undefined && fields.order_id !== undefined && String(fields.order_id) !== asked.order_id) ||
    (asked.invoice_number !== undefined && invoiceNumber !== asked.invoice_number);
  if (other) throw new EinvoiceUnanswered(`Amego ${AMEGO_PATHS.query} answered about another invoice`);
  const waiting = Array.isArray(fields.wait) ? (fields.wait as Record<string, unknown>[]) : [];
  const voided =
    Number(fields.cancel_date ?? 0) > 0 ||
    VOIDED_TYPE.test(String(fields.invoice_type ?? '')) ||
    waiting.some((entry) => VOIDED_TYPE.test(String(entry?.invoice_type ?? '')));
  return { invoiceNumber, randomCode, issuedAt, voided };
}

type AmegoAnswer = { code: number; msg: string; body: Record<string, unknown> };

/**
 * Posts `data` signed to `path` and reads Amego's JSON answer (`code` 0 for success; some
 * endpoints send it as a string). No answer, a timeout, an HTTP error or a body that is not that
 * JSON throws EinvoiceUnanswered: Amego may have acted. Messages name the path, never the form.
 */
async function post(
  merchant: AmegoMerchant,
  path: string,
  data: unknown,
  now: Date,
  options: AmegoProviderOptions,
): Promise<AmegoAnswer> {
  let text: string;
  try {
    const response = await (options.fetch ?? fetch)(`${merchant.baseUrl}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(amegoForm(merchant, data, now)).toString(),
      signal: AbortSignal.timeout(options.timeoutMs ?? 20_000),
    });
    if (!response.ok) throw new EinvoiceUnanswered(`Amego ${path} answered HTTP ${response.status}`);
    text = await response.text();
  } catch (error) {
    if (error instanceof EinvoiceUnanswered) throw error;
    throw new EinvoiceUnanswered(`Amego ${path} did not answer: ${(error as Error).message}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new EinvoiceUnanswered(`Amego ${path} answer is not JSON`);
  }
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw new EinvoiceUnanswered(`Amego ${path} answer is not a JSON object`);
  }
  const fields = body as Record<string, unknown>;
  const code = typeof fields.code === 'number' || typeof fields.code === 'string' ? Number(fields.code) : NaN;
  if (!Number.isInteger(code) || (typeof fields.code === 'string' && !/^\d+$/.test(fields.code))) {
    throw new EinvoiceUnanswered(`Amego ${path} answer has no code`);
  }
  return { code, msg: typeof fields.msg === 'string' ? fields.msg : '', body: fields };
}
