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
import { EcpayCipherError, decryptData, sealRequest } from './cipher';
import { ECPAY_EINVOICE_PATHS, type EcpayEinvoiceMerchant, parseTaipeiDateTime, taipeiDate } from './merchant';

/**
 * ECPay's B2C e-invoice API behind the e-invoice port: 一般開立發票 (Issue), 查詢發票明細
 * (GetIssue by RelateNumber), 作廢發票 (Invalid), 一般開立折讓 (Allowance) and 查詢折讓明細
 * (GetAllowanceList). Written from the sources named in docs/decisions/0021-ecpay-einvoice-client.md.
 *
 * - The merchant order number is ECPay's RelateNumber, unique per merchant; ECPay refuses it a
 *   second time (RtnCode 5070357, 自訂編號重覆), and `issue` then answers the invoice ECPay holds
 *   for it, so an issue asked again after a lost answer is issued once.
 * - A void asked again of a voided invoice (5070453, 該發票已被作廢過) is `voided`.
 * - ECPay takes no key for an allowance. `findAllowance` lists the invoice's allowances
 *   (GetAllowanceList): one of the request's total that is not voided and not among the numbers
 *   the caller recorded (`knownAllowanceNumbers`) is the one an unanswered request made.
 *   `allowance` asks it itself when its own answer is lost; a caller retrying asks it first.
 * - Anything that cannot be trusted (network, timeout, HTTP status, not JSON, another merchant,
 *   TransCode not 1, a Data that does not decrypt, a success whose fields do not parse) throws
 *   `EinvoiceUnanswered`; a refusal is `ecpay_<RtnCode>` with ECPay's RtnMsg.
 *
 * Nothing here logs; no error message carries a key, a request body or the buyer's carrier.
 */
export type EcpayEinvoiceOptions = {
  fetch?: typeof fetch;
  /** How long to wait for each answer; 20 s when not given. */
  timeoutMs?: number;
  /**
   * For zero-rated invoices: 通關方式 (ClearanceMark: 1 非經海關出口, 2 經海關出口) and 零稅率原因
   * (ZeroTaxRateReason 71–79, MIG 4.0). The port carries neither; 1 and 72 (services provided in
   * Taiwan and used abroad, 營業稅法 §7(2)) when not given, the case of a subscription service.
   */
  zeroTaxRate?: { clearanceMark: '1' | '2'; reason: `7${1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9}` };
};

/** One allowance ECPay lists against an invoice (查詢折讓明細). */
export type EcpayAllowanceRecord = {
  allowanceNumber: string;
  invoiceNumber: string;
  issuedAt: Date;
  /** IA_Total_Tax_Amount: the allowance, tax included. */
  total: number;
  voided: boolean;
};

/** The port, with its allowance lookup, and ECPay's list of an invoice's allowances besides. */
export interface EcpayEinvoiceProvider extends EinvoiceProvider {
  readonly name: 'ecpay';
  /** Every allowance ECPay holds against the invoice (voided ones included). */
  listAllowances(invoiceNumber: string, issuedAt: Date, now: Date): Promise<EcpayAllowanceRecord[]>;
  /**
   * The allowance of `request.total` against the invoice that is not voided and not one of
   * `request.knownAllowanceNumbers`: null when there is none, so asking again makes one
   * allowance; `EinvoiceUnanswered` when the list cannot be read or more than one such allowance
   * exists (which of them is this one, ECPay cannot say: it takes no key for an allowance).
   */
  findAllowance(request: AllowanceRequest, now: Date): Promise<{ allowanceNumber: string } | null>;
}

/** The RtnCodes this client reads; every other one is a refusal (or, for a query, no answer). */
export const ECPAY_EINVOICE_RTN = {
  success: 1,
  /** GetIssue: 查無發票資料，請重新確認. */
  invoiceNotFound: 2,
  /** GetAllowanceList: no allowance against the invoice. */
  noAllowances: 7,
  /** Issue: B2C開立發票 自訂編號重覆，請重新設定. */
  duplicateRelateNumber: 5070357,
  /** Invalid: B2C作廢發票 該發票已被作廢過. */
  alreadyVoided: 5070453,
} as const;

const TAX_TYPES: Record<EinvoiceTaxType, '1' | '2' | '3'> = { taxed: '1', zero_rated: '2', exempt: '3' };
const INVOICE_NUMBER = /^[A-Z]{2}\d{8}$/;
const ALLOWANCE_NUMBER = /^\d{16}$/;

export function ecpayEinvoiceProvider(
  merchant: EcpayEinvoiceMerchant,
  options: EcpayEinvoiceOptions = {},
): EcpayEinvoiceProvider {
  if (Buffer.byteLength(merchant.hashKey) !== 16 || Buffer.byteLength(merchant.hashIV) !== 16) {
    throw new RangeError('An ECPay e-invoice HashKey and HashIV are 16 bytes each');
  }
  const timeoutMs = options.timeoutMs ?? 20_000;
  const zeroTaxRate = options.zeroTaxRate ?? { clearanceMark: '1', reason: '72' };

  /** Posts `fields` sealed to `path`; the fields inside the answer's Data, or `EinvoiceUnanswered`. */
  async function call(path: string, fields: Record<string, unknown>, now: Date): Promise<Record<string, unknown>> {
    const body = JSON.stringify(sealRequest(merchant, fields, now));
    let text: string;
    try {
      const response = await (options.fetch ?? fetch)(`${merchant.baseUrl}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(timeoutMs),
      });
      if (!response.ok) throw new EinvoiceUnanswered(`${path} answered HTTP ${response.status}`);
      text = await response.text();
    } catch (error) {
      if (error instanceof EinvoiceUnanswered) throw error;
      throw new EinvoiceUnanswered(`${path} did not answer: ${(error as Error).message}`);
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new EinvoiceUnanswered(`${path} answer is not JSON`);
    }
    if (!answer || typeof answer !== 'object' || Array.isArray(answer)) {
      throw new EinvoiceUnanswered(`${path} answer is not an object`);
    }
    const outside = answer as Record<string, unknown>;
    if (outside.MerchantID !== undefined && String(outside.MerchantID) !== merchant.merchantId) {
      throw new EinvoiceUnanswered(`${path} answered for another merchant`);
    }
    if (Number(outside.TransCode) !== 1) {
      // TransCode is ECPay's word on the envelope (decrypt failure, timestamp): no Data to read.
      throw new EinvoiceUnanswered(
        `${path} answered TransCode ${String(outside.TransCode)}: ${String(outside.TransMsg ?? '')}`,
      );
    }
    if (typeof outside.Data !== 'string' || !outside.Data) throw new EinvoiceUnanswered(`${path} answered no Data`);
    let inside: Record<string, unknown>;
    try {
      inside = decryptData(outside.Data, merchant);
    } catch (error) {
      if (error instanceof EcpayCipherError) throw new EinvoiceUnanswered(`${path} answer: ${error.message}`);
      throw error;
    }
    const code = inside.RtnCode;
    if (
      !(typeof code === 'number' ? Number.isSafeInteger(code) : typeof code === 'string' && /^-?\d{1,15}$/.test(code))
    ) {
      throw new EinvoiceUnanswered(`${path} answered no RtnCode`);
    }
    return inside;
  }

  const rtnCode = (inside: Record<string, unknown>) => Number(inside.RtnCode);
  const rtnMsg = (inside: Record<string, unknown>) => (typeof inside.RtnMsg === 'string' ? inside.RtnMsg : '');
  const refused = (inside: Record<string, unknown>) =>
    ({ status: 'refused', code: `ecpay_${rtnCode(inside)}`, message: rtnMsg(inside) }) as const;

  async function query(merchantOrderNo: string, now: Date): Promise<QueriedEinvoice | null> {
    checkOrderNo(merchantOrderNo);
    const path = ECPAY_EINVOICE_PATHS.getIssue;
    const inside = await call(path, { MerchantID: merchant.merchantId, RelateNumber: merchantOrderNo }, now);
    if (rtnCode(inside) === ECPAY_EINVOICE_RTN.invoiceNotFound) return null;
    if (rtnCode(inside) !== ECPAY_EINVOICE_RTN.success) {
      throw new EinvoiceUnanswered(`${path} answered RtnCode ${rtnCode(inside)}: ${rtnMsg(inside)}`);
    }
    const relate = inside.IIS_Relate_Number;
    if (relate !== undefined && String(relate).toUpperCase() !== merchantOrderNo.toUpperCase()) {
      throw new EinvoiceUnanswered(`${path} answered about another RelateNumber`);
    }
    const invoice = issuedOf(path, inside.IIS_Number, inside.IIS_Random_Number, inside.IIS_Create_Date);
    const invalid = String(inside.IIS_Invalid_Status);
    if (invalid !== '0' && invalid !== '1') throw new EinvoiceUnanswered(`${path} answered no IIS_Invalid_Status`);
    return { ...invoice, voided: invalid === '1' };
  }

  async function listAllowances(invoiceNumber: string, issuedAt: Date, now: Date): Promise<EcpayAllowanceRecord[]> {
    const path = ECPAY_EINVOICE_PATHS.getAllowanceList;
    const inside = await call(
      path,
      { MerchantID: merchant.merchantId, SearchType: '1', InvoiceNo: invoiceNumber, Date: taipeiDate(issuedAt) },
      now,
    );
    if (rtnCode(inside) === ECPAY_EINVOICE_RTN.noAllowances) return [];
    if (rtnCode(inside) !== ECPAY_EINVOICE_RTN.success) {
      throw new EinvoiceUnanswered(`${path} answered RtnCode ${rtnCode(inside)}: ${rtnMsg(inside)}`);
    }
    // The document lists AllowanceInfo; one client saw the fields of a single allowance at the top.
    const rows: unknown[] = Array.isArray(inside.AllowanceInfo)
      ? inside.AllowanceInfo
      : inside.IA_Allow_No !== undefined
        ? [inside]
        : [];
    return rows.map((row) => {
      const fields = (row ?? {}) as Record<string, unknown>;
      const allowanceNumber = String(fields.IA_Allow_No ?? '');
      const issued = parseTaipeiDateTime(fields.IA_Date);
      const total = Number(fields.IA_Total_Tax_Amount);
      const invalid = String(fields.IA_Invalid_Status);
      if (!ALLOWANCE_NUMBER.test(allowanceNumber) || !issued || !Number.isSafeInteger(total)) {
        throw new EinvoiceUnanswered(`${path} answered an allowance this client cannot read`);
      }
      if (fields.IA_Invoice_No !== undefined && fields.IA_Invoice_No !== invoiceNumber) {
        throw new EinvoiceUnanswered(`${path} answered about another invoice`);
      }
      if (invalid !== '0' && invalid !== '1') throw new EinvoiceUnanswered(`${path} answered no IA_Invalid_Status`);
      return { allowanceNumber, invoiceNumber, issuedAt: issued, total, voided: invalid === '1' };
    });
  }

  async function findAllowance(request: AllowanceRequest, now: Date): Promise<{ allowanceNumber: string } | null> {
    const candidates = (await listAllowances(request.invoiceNumber, request.issuedAt, now)).filter(
      (allowance) =>
        !allowance.voided &&
        allowance.total === request.total &&
        !request.knownAllowanceNumbers.includes(allowance.allowanceNumber),
    );
    if (candidates.length > 1) {
      throw new EinvoiceUnanswered(
        `${candidates.length} allowances of ${request.total} against ${request.invoiceNumber} are not known: which one is this?`,
      );
    }
    const [found] = candidates;
    return found ? { allowanceNumber: found.allowanceNumber } : null;
  }

  return {
    name: 'ecpay',
    query,
    listAllowances,
    findAllowance,

    async issue(request: IssueRequest, now: Date): Promise<IssueOutcome> {
      checkOrderNo(request.merchantOrderNo);
      checkAmounts('An invoice', request.items, request.total, request.salesAmount, request.taxAmount);
      if (!request.contact.email) {
        // 客戶電子信箱 or 客戶手機號碼 is required of every invoice; the port carries no phone.
        return {
          status: 'refused',
          code: 'ecpay_missing_contact',
          message: 'ECPay needs the buyer email (CustomerEmail) for every invoice',
        };
      }
      const taxType = TAX_TYPES[request.taxType];
      const fields: Record<string, unknown> = {
        MerchantID: merchant.merchantId,
        RelateNumber: request.merchantOrderNo,
        CustomerID: '',
        ...buyerFields(request.buyer, request.contact),
        TaxType: taxType,
        ...(request.taxType === 'zero_rated'
          ? { ClearanceMark: zeroTaxRate.clearanceMark, ZeroTaxRateReason: zeroTaxRate.reason }
          : {}),
        // 特種稅額類別: the document asks 8 of an exempt invoice; ECPay sets 0 for the others.
        ...(request.taxType === 'exempt' ? { SpecialTaxType: 8 } : {}),
        SalesAmount: request.total,
        InvoiceRemark: '',
        InvType: '07',
        vat: '1',
        Items: itemsOf(request.items, taxType),
      };
      const path = ECPAY_EINVOICE_PATHS.issue;
      const inside = await call(path, fields, now);
      if (rtnCode(inside) === ECPAY_EINVOICE_RTN.success) {
        return { status: 'issued', ...issuedOf(path, inside.InvoiceNo, inside.RandomNumber, inside.InvoiceDate) };
      }
      if (rtnCode(inside) === ECPAY_EINVOICE_RTN.duplicateRelateNumber || /自訂編號.*重[覆複]/.test(rtnMsg(inside))) {
        // Issued before (an earlier answer was lost, or a retry): the invoice ECPay holds is the answer.
        const existing = await query(request.merchantOrderNo, now);
        if (existing && !existing.voided) {
          const { voided: _, ...issued } = existing;
          return { status: 'issued', ...issued };
        }
        if (existing) {
          return {
            status: 'refused',
            code: `ecpay_${rtnCode(inside)}`,
            message: `${rtnMsg(inside)} (RelateNumber ${request.merchantOrderNo} is invoice ${existing.invoiceNumber}, voided)`,
          };
        }
      }
      // ECPay's message may quote what it refused: never the buyer's carrier (port: no carrier in logs).
      const carrier = 'carrier' in request.buyer ? request.buyer.carrier : '';
      const answer = refused(inside);
      return carrier ? { ...answer, message: answer.message.replaceAll(carrier, '***') } : answer;
    },

    async void(request: VoidRequest, now: Date): Promise<VoidOutcome> {
      const path = ECPAY_EINVOICE_PATHS.invalid;
      const inside = await call(
        path,
        {
          MerchantID: merchant.merchantId,
          InvoiceNo: request.invoiceNumber,
          InvoiceDate: taipeiDate(request.issuedAt),
          // 作廢原因 is String(20).
          Reason: [...request.reason].slice(0, 20).join(''),
        },
        now,
      );
      const code = rtnCode(inside);
      if (code === ECPAY_EINVOICE_RTN.success) {
        if (inside.InvoiceNo !== undefined && inside.InvoiceNo !== request.invoiceNumber) {
          throw new EinvoiceUnanswered(`${path} answered about another invoice`);
        }
        return { status: 'voided' };
      }
      if (code === ECPAY_EINVOICE_RTN.alreadyVoided) return { status: 'voided' };
      return refused(inside);
    },

    async allowance(request: AllowanceRequest, now: Date): Promise<AllowanceOutcome> {
      checkAmounts('An allowance', request.items, request.total, request.salesAmount, request.taxAmount);
      const fields = {
        MerchantID: merchant.merchantId,
        InvoiceNo: request.invoiceNumber,
        InvoiceDate: taipeiDate(request.issuedAt),
        // E: ECPay mails the allowance to the buyer; N: no notice.
        AllowanceNotify: request.contact.email ? 'E' : 'N',
        CustomerName: request.buyer.kind === 'company' ? request.buyer.companyName : (request.contact.name ?? ''),
        NotifyMail: request.contact.email ?? '',
        NotifyPhone: '',
        AllowanceAmount: request.total,
        Items: itemsOf(request.items, TAX_TYPES[request.taxType]),
      };
      const path = ECPAY_EINVOICE_PATHS.allowance;
      let inside: Record<string, unknown>;
      try {
        inside = await call(path, fields, now);
      } catch (error) {
        if (!(error instanceof EinvoiceUnanswered)) throw error;
        // The answer was lost: one allowance of this total that the caller does not know is ours.
        const made = await findAllowance(request, now).catch(() => null);
        if (made) return { status: 'issued', allowanceNumber: made.allowanceNumber };
        throw error;
      }
      if (rtnCode(inside) !== ECPAY_EINVOICE_RTN.success) return refused(inside);
      const allowanceNumber = String(inside.IA_Allow_No ?? '');
      if (!ALLOWANCE_NUMBER.test(allowanceNumber)) throw new EinvoiceUnanswered(`${path} answered no IA_Allow_No`);
      if (inside.IA_Invoice_No !== undefined && inside.IA_Invoice_No !== request.invoiceNumber) {
        throw new EinvoiceUnanswered(`${path} answered about another invoice`);
      }
      return { status: 'issued', allowanceNumber };
    },
  };
}

/** The fields that say where the invoice goes (發票作業 使用情境說明, ?p=7896). */
function buyerFields(buyer: EinvoiceBuyer, contact: IssueRequest['contact']): Record<string, string> {
  const base = {
    CustomerIdentifier: '',
    CustomerName: contact.name ?? '',
    CustomerAddr: '',
    CustomerPhone: '',
    CustomerEmail: contact.email ?? '',
    Print: '0',
    Donation: '0',
    LoveCode: '',
    CarrierType: '',
    CarrierNum: '',
  };
  switch (buyer.kind) {
    case 'member':
      // 綠界電子發票載具: ECPay fills CarrierNum from CustomerEmail.
      return { ...base, CarrierType: '1' };
    case 'citizen_certificate':
      return { ...base, CarrierType: '2', CarrierNum: buyer.carrier };
    case 'mobile_barcode':
      return { ...base, CarrierType: '3', CarrierNum: buyer.carrier };
    case 'donation':
      return { ...base, Donation: '1', LoveCode: buyer.donationCode };
    case 'company':
      // 統一編號發票 kept in ECPay's carrier (情境二: CarrierType 1 with Print 0): no paper to print
      // and no address to print it to; the buyer is mailed at CustomerEmail.
      return { ...base, CustomerIdentifier: buyer.taxId, CustomerName: buyer.companyName, CarrierType: '1' };
  }
}

function itemsOf(items: EinvoiceItem[], taxType: '1' | '2' | '3') {
  return items.map((item, at) => ({
    ItemSeq: at + 1,
    ItemName: item.description,
    ItemCount: item.quantity,
    ItemWord: '式',
    ItemPrice: item.unitPrice,
    ItemTaxType: taxType,
    ItemAmount: item.amount,
  }));
}

/** An issued invoice from an answer's number, random code and date; a malformed one is no answer. */
function issuedOf(path: string, number: unknown, random: unknown, date: unknown) {
  const invoiceNumber = typeof number === 'string' ? number : '';
  const randomCode = typeof random === 'number' ? String(random).padStart(4, '0') : String(random ?? '');
  const issuedAt = parseTaipeiDateTime(date);
  if (!INVOICE_NUMBER.test(invoiceNumber) || !/^\d{4}$/.test(randomCode) || !issuedAt) {
    throw new EinvoiceUnanswered(`${path} answered an invoice this client cannot read`);
  }
  return { invoiceNumber, randomCode, issuedAt };
}

function checkOrderNo(merchantOrderNo: string): void {
  // RelateNumber: String(30), 請勿使用特殊符號; the port's key is at most 30 of A-Za-z0-9.
  if (!/^[A-Za-z0-9]{1,30}$/.test(merchantOrderNo)) {
    throw new RangeError(`An ECPay RelateNumber is 1 to 30 letters and digits, not ${JSON.stringify(merchantOrderNo)}`);
  }
}

/** The port's amounts as ECPay checks them (vat 1: ItemPrice x ItemCount = ItemAmount, their sum the total). */
function checkAmounts(
  what: string,
  items: EinvoiceItem[],
  total: number,
  salesAmount: number,
  taxAmount: number,
): void {
  if (items.length === 0) throw new RangeError(`${what} needs at least one item`);
  for (const item of items) {
    if (!Number.isSafeInteger(item.amount) || !Number.isSafeInteger(item.unitPrice) || !(item.quantity > 0)) {
      throw new RangeError(`${what} item is whole TWD with a positive quantity`);
    }
    if (item.quantity * item.unitPrice !== item.amount) {
      throw new RangeError(`${what} item's amount is not its quantity times its unit price`);
    }
  }
  const sum = items.reduce((total, item) => total + item.amount, 0);
  if (!Number.isSafeInteger(total) || total <= 0 || sum !== total) {
    throw new RangeError(`${what} total is a positive whole TWD, the sum of its items (${sum}), not ${total}`);
  }
  if (salesAmount + taxAmount !== total) throw new RangeError(`${what} salesAmount + taxAmount is not its total`);
}
