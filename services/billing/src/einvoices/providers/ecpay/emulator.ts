import { randomInt } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type EmulatedFailure, failureQueue, loseAnswer, serveLocally } from '../emulator-server';
import { EcpayCipherError, decryptData, encryptData } from './cipher';
import { ECPAY_EINVOICE_PATHS, type EcpayEinvoiceKeys, taipeiDate, taipeiDateTime } from './merchant';

/**
 * ECPay's B2C e-invoice endpoints as its documents describe them, for tests and for a Sandbox
 * pointed at it: Issue, GetIssue (by RelateNumber, or InvoiceNo and InvoiceDate), Invalid,
 * Allowance and GetAllowanceList, behind the v3 envelope (the cipher, MerchantID and the
 * 10-minute Timestamp window are checked). Written from the sources named in
 * docs/decisions/0021-ecpay-einvoice-client.md, not from ECPay's behaviour: the RtnCodes it answers
 * are the ones those sources name (EMULATOR_RTN); where they are silent it chooses, and says so.
 */
export interface EcpayEinvoiceEmulator {
  url: string;
  /** The invoices issued, by RelateNumber as first sent (ECPay compares RelateNumbers ignoring case). */
  invoices: Map<string, EmulatedEinvoice>;
  /** The allowances made, by IA_Allow_No. */
  allowances: Map<string, EmulatedAllowance>;
  /** Every call whose envelope checked out, with the fields inside its Data, in order. */
  calls: { path: string; fields: Record<string, unknown> }[];
  /**
   * The next call on `path`: `drop` acts, then closes the connection unanswered; `http500` acts,
   * then answers HTTP 500; `refuse` does not act and answers RtnCode 9000001 (呼叫財政部API失敗).
   * Several calls lose that many answers, in order.
   */
  failNext(path: string, how: EmulatedFailure): void;
  close(): Promise<void>;
}

export interface EmulatedEinvoice {
  relateNumber: string;
  invoiceNumber: string;
  randomCode: string;
  issuedAt: Date;
  /** The Issue request's fields, as decrypted. */
  fields: Record<string, unknown>;
  total: number;
  /** For a company buyer (taxed): total / 1.05 rounded half up, and the rest; the emulator's rounding (ECPay's is not documented). */
  salesAmount: number;
  taxAmount: number;
  /** What allowances may still take (IIS_Remain_Allowance_Amt). */
  remaining: number;
  voided: boolean;
  voidReason?: string;
}

export interface EmulatedAllowance {
  allowanceNumber: string;
  invoiceNumber: string;
  issuedAt: Date;
  total: number;
  fields: Record<string, unknown>;
  voided: boolean;
}

/**
 * RtnCodes and TransCodes the emulator answers. ECPay's document publishes no code table (錯誤代碼
 * 一覽表 sends merchants to the vendor back office); these are the codes community clients recorded
 * from the stage site, except `fieldError`, the emulator's own for any other field it refuses.
 */
export const EMULATOR_RTN = {
  invoiceNotFound: { RtnCode: 2, RtnMsg: '查無發票資料，請重新確認' },
  noAllowances: { RtnCode: 7, RtnMsg: '查無資料' },
  duplicateRelateNumber: { RtnCode: 5070357, RtnMsg: 'B2C開立發票 自訂編號重覆，請重新設定' },
  amountsDisagree: { RtnCode: 5000022, RtnMsg: '驗證發票金額發現錯誤，與商品合計金額不符' },
  unknownInvoiceNumber: { RtnCode: 1600003, RtnMsg: '無發票號碼資料' },
  alreadyVoided: { RtnCode: 5070453, RtnMsg: 'B2C作廢發票 該發票已被作廢過' },
  voidAfterAllowance: {
    RtnCode: 5070450,
    RtnMsg: 'B2C作廢發票 該發票已被折讓過，無法直接作廢發票並請確認該發票所開立的折讓單是否全部已作廢',
  },
  allowanceOfVoided: { RtnCode: 2000042, RtnMsg: '作廢發票號碼不能折讓' },
  allowanceTooLarge: { RtnCode: 2000016, RtnMsg: '折讓金額有誤，請確認' },
  refused: { RtnCode: 9000001, RtnMsg: '呼叫財政部API失敗，請稍後再試' },
  fieldError: 8888888,
} as const;

const TRANS = {
  decryptFailed: { TransCode: 110, TransMsg: 'The parameter [Data] decrypt fail.' },
  staleTimestamp: { TransCode: 104, TransMsg: 'Timestamp is over 10 minutes than it just produced.' },
  /** The emulator's choice: ECPay's answer to an unknown MerchantID was not found in any source. */
  otherMerchant: { TransCode: 9999, TransMsg: 'MerchantID Error' },
} as const;

type Inside = Record<string, unknown> & { RtnCode: number; RtnMsg: string };

const fieldError = (field: string, why: string): Inside => ({
  RtnCode: EMULATOR_RTN.fieldError,
  RtnMsg: `emulator: ${field} ${why}`,
});
const str = (value: unknown) =>
  typeof value === 'string' ? value : value === undefined || value === null ? '' : String(value);

export async function startEcpayEinvoiceEmulator(
  merchant: EcpayEinvoiceKeys & { merchantId: string },
  now: () => Date = () => new Date(),
): Promise<EcpayEinvoiceEmulator> {
  const invoices = new Map<string, EmulatedEinvoice>();
  const allowances = new Map<string, EmulatedAllowance>();
  const calls: EcpayEinvoiceEmulator['calls'] = [];
  const failures = failureQueue();
  let invoiceSeq = 0;
  let allowanceSeq = 0;

  const byRelate = (relate: string) =>
    [...invoices.values()].find((invoice) => invoice.relateNumber.toUpperCase() === relate.toUpperCase());
  const byNumberAndDate = (fields: Record<string, unknown>) => {
    const invoice = [...invoices.values()].find((candidate) => candidate.invoiceNumber === str(fields.InvoiceNo));
    const date = str(fields.InvoiceDate).slice(0, 10).replaceAll('/', '-');
    return invoice && date === taipeiDate(invoice.issuedAt) ? invoice : undefined;
  };

  function issue(fields: Record<string, unknown>): Inside {
    const relate = str(fields.RelateNumber);
    if (!/^[A-Za-z0-9]{1,30}$/.test(relate)) return fieldError('RelateNumber', 'is 1 to 30 letters and digits');
    if (byRelate(relate)) {
      return { ...EMULATOR_RTN.duplicateRelateNumber, InvoiceNo: '', InvoiceDate: '', RandomNumber: '' };
    }
    const problem = issueProblem(fields);
    if (problem) return problem;
    const total = Number(fields.SalesAmount);
    const company = str(fields.CustomerIdentifier) !== '' && str(fields.TaxType) === '1';
    const salesAmount = company ? untaxedOf(total) : total;
    const invoice: EmulatedEinvoice = {
      relateNumber: relate,
      invoiceNumber: `AB${10_000_000 + ++invoiceSeq}`,
      randomCode: String(randomInt(0, 10_000)).padStart(4, '0'),
      issuedAt: now(),
      fields,
      total,
      salesAmount,
      taxAmount: total - salesAmount,
      remaining: total,
      voided: false,
    };
    invoices.set(relate, invoice);
    return {
      RtnCode: 1,
      RtnMsg: '開立發票成功',
      InvoiceNo: invoice.invoiceNumber,
      InvoiceDate: taipeiDateTime(invoice.issuedAt),
      RandomNumber: invoice.randomCode,
    };
  }

  function getIssue(fields: Record<string, unknown>): Inside {
    const relate = str(fields.RelateNumber);
    const invoice = relate ? byRelate(relate) : byNumberAndDate(fields);
    if (!invoice) return { ...EMULATOR_RTN.invoiceNotFound };
    const sent = invoice.fields;
    return {
      RtnCode: 1,
      RtnMsg: '查詢成功',
      IIS_Mer_ID: Number(merchant.merchantId),
      IIS_Number: invoice.invoiceNumber,
      IIS_Relate_Number: invoice.relateNumber,
      IIS_Identifier: str(sent.CustomerIdentifier) || '0000000000',
      IIS_Customer_Name: str(sent.CustomerName),
      IIS_Customer_Email: str(sent.CustomerEmail),
      IIS_Clearance_Mark: str(sent.ClearanceMark),
      IIS_Type: '07',
      IIS_Category: str(sent.CustomerIdentifier) ? 'B2B' : 'B2C',
      IIS_Tax_Type: str(sent.TaxType),
      IIS_Tax_Amount: invoice.taxAmount,
      IIS_Sales_Amount: invoice.total,
      IIS_Carrier_Type: str(sent.CarrierType),
      IIS_Create_Date: taipeiDateTime(invoice.issuedAt),
      IIS_Issue_Status: '1',
      IIS_Invalid_Status: invoice.voided ? '1' : '0',
      IIS_Remain_Allowance_Amt: invoice.remaining,
      IIS_Random_Number: invoice.randomCode,
      Items: sent.Items,
    };
  }

  function invalid(fields: Record<string, unknown>): Inside {
    const invoice = byNumberAndDate(fields);
    if (!invoice) return { ...EMULATOR_RTN.unknownInvoiceNumber };
    const reason = str(fields.Reason);
    if (!reason || [...reason].length > 20) return fieldError('Reason', 'is 1 to 20 characters');
    if (invoice.voided) return { ...EMULATOR_RTN.alreadyVoided, InvoiceNo: invoice.invoiceNumber };
    if ([...allowances.values()].some((a) => a.invoiceNumber === invoice.invoiceNumber && !a.voided)) {
      return { ...EMULATOR_RTN.voidAfterAllowance, InvoiceNo: invoice.invoiceNumber };
    }
    invoice.voided = true;
    invoice.voidReason = reason;
    return { RtnCode: 1, RtnMsg: '作廢發票成功', InvoiceNo: invoice.invoiceNumber };
  }

  function allowance(fields: Record<string, unknown>): Inside {
    const invoice = byNumberAndDate(fields);
    if (!invoice) return { ...EMULATOR_RTN.unknownInvoiceNumber };
    if (invoice.voided) return { ...EMULATOR_RTN.allowanceOfVoided };
    const notify = str(fields.AllowanceNotify);
    if (!['S', 'E', 'A', 'N'].includes(notify)) return fieldError('AllowanceNotify', 'is S, E, A or N');
    if ((notify === 'E' || notify === 'A') && !/^[^@\s]+@[^@\s]+$/.test(str(fields.NotifyMail))) {
      return fieldError('NotifyMail', 'is needed when AllowanceNotify is E or A');
    }
    const amount = Number(fields.AllowanceAmount);
    if (!Number.isSafeInteger(amount) || amount <= 0 || itemsTotal(fields.Items) !== amount) {
      return fieldError('AllowanceAmount', 'is a positive integer, the sum of the items');
    }
    if (amount > invoice.remaining) return { ...EMULATOR_RTN.allowanceTooLarge };
    const issuedAt = now();
    const stamp = taipeiDateTime(issuedAt).replace(/\D/g, '').slice(2);
    const record: EmulatedAllowance = {
      allowanceNumber: `${stamp}${String(++allowanceSeq % 10_000).padStart(4, '0')}`,
      invoiceNumber: invoice.invoiceNumber,
      issuedAt,
      total: amount,
      fields,
      voided: false,
    };
    allowances.set(record.allowanceNumber, record);
    invoice.remaining -= amount;
    return {
      RtnCode: 1,
      RtnMsg: '成功',
      IA_Allow_No: record.allowanceNumber,
      IA_Invoice_No: invoice.invoiceNumber,
      IA_Date: taipeiDateTime(issuedAt),
      IA_Remain_Allowance_Amt: invoice.remaining,
    };
  }

  function getAllowanceList(fields: Record<string, unknown>): Inside {
    const type = str(fields.SearchType);
    const date = str(fields.Date).slice(0, 10).replaceAll('/', '-');
    let listed: EmulatedAllowance[];
    if (type === '0') listed = [...allowances.values()].filter((a) => a.allowanceNumber === str(fields.AllowanceNo));
    else if (type === '1' || type === '2') {
      const invoice = [...invoices.values()].find((candidate) => candidate.invoiceNumber === str(fields.InvoiceNo));
      listed = [...allowances.values()].filter(
        (a) =>
          invoice !== undefined &&
          a.invoiceNumber === invoice.invoiceNumber &&
          date === taipeiDate(type === '1' ? invoice.issuedAt : a.issuedAt),
      );
    } else return fieldError('SearchType', 'is 0, 1 or 2');
    if (listed.length === 0) return { ...EMULATOR_RTN.noAllowances };
    return {
      RtnCode: 1,
      RtnMsg: '查詢成功',
      AllowanceInfo: listed.map((a) => {
        const invoice = [...invoices.values()].find((candidate) => candidate.invoiceNumber === a.invoiceNumber)!;
        const taxed = str(invoice.fields.TaxType) === '1';
        const untaxed = taxed ? untaxedOf(a.total) : a.total;
        return {
          IA_Allow_No: a.allowanceNumber,
          IA_Invoice_No: a.invoiceNumber,
          IA_Date: taipeiDateTime(a.issuedAt),
          IA_Invoice_Issue_Date: taipeiDateTime(invoice.issuedAt),
          IA_Invalid_Status: a.voided ? '1' : '0',
          IA_Tax_Type: str(invoice.fields.TaxType),
          IA_Total_Amount: untaxed,
          IA_Tax_Amount: a.total - untaxed,
          IA_Total_Tax_Amount: a.total,
          Items: a.fields.Items,
        };
      }),
    };
  }

  const routes: Record<string, (fields: Record<string, unknown>) => Inside> = {
    [ECPAY_EINVOICE_PATHS.issue]: issue,
    [ECPAY_EINVOICE_PATHS.getIssue]: getIssue,
    [ECPAY_EINVOICE_PATHS.invalid]: invalid,
    [ECPAY_EINVOICE_PATHS.allowance]: allowance,
    [ECPAY_EINVOICE_PATHS.getAllowanceList]: getAllowanceList,
  };

  const envelope = (outside: Record<string, unknown>) => ({
    PlatformID: '',
    MerchantID: merchant.merchantId,
    RpHeader: { Timestamp: Math.floor(now().getTime() / 1000) },
    ...outside,
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://emulator').pathname;
    if (req.method !== 'POST') return void res.writeHead(405, { 'content-type': 'text/plain' }).end('POST only');
    const route = routes[path];
    if (!route) return void res.writeHead(404, { 'content-type': 'text/plain' }).end('No such API');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await bodyOf(req)) as Record<string, unknown>;
      if (!body || typeof body !== 'object') throw new Error('not an object');
    } catch {
      return void res.writeHead(400, { 'content-type': 'text/plain' }).end('The request is not JSON');
    }
    const json = (value: unknown) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
    if (str(body.MerchantID) !== merchant.merchantId)
      return void json(envelope({ ...TRANS.otherMerchant, Data: null }));
    const timestamp = Number((body.RqHeader as Record<string, unknown> | undefined)?.Timestamp);
    if (!Number.isFinite(timestamp) || Math.abs(now().getTime() / 1000 - timestamp) > 600) {
      return void json(envelope({ ...TRANS.staleTimestamp, Data: null }));
    }
    let fields: Record<string, unknown>;
    try {
      fields = decryptData(str(body.Data), merchant);
    } catch (error) {
      if (!(error instanceof EcpayCipherError)) throw error;
      return void json(envelope({ ...TRANS.decryptFailed, Data: null }));
    }
    calls.push({ path, fields });
    const how = failures.take(path);
    const inside: Inside =
      how === 'refuse'
        ? { ...EMULATOR_RTN.refused }
        : str(fields.MerchantID) !== merchant.merchantId
          ? fieldError('MerchantID', 'is not the envelope’s')
          : route(fields);
    if (loseAnswer(res, how)) return;
    json(envelope({ TransCode: 1, TransMsg: 'Success', Data: encryptData(inside, merchant) }));
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

/** What ECPay's document says it refuses in an Issue (?p=7896 使用情境說明 and the Data fields), or null. */
function issueProblem(fields: Record<string, unknown>): Inside | null {
  const identifier = str(fields.CustomerIdentifier);
  const print = str(fields.Print);
  const donation = str(fields.Donation);
  const carrier = str(fields.CarrierType);
  const carrierNum = str(fields.CarrierNum);
  if (!str(fields.CustomerEmail) && !str(fields.CustomerPhone)) {
    return fieldError('CustomerEmail', 'or CustomerPhone is required');
  }
  if (!['0', '1'].includes(print) || !['0', '1'].includes(donation))
    return fieldError('Print', 'and Donation are 0 or 1');
  if (!['', '1', '2', '3'].includes(carrier)) return fieldError('CarrierType', 'is empty, 1, 2 or 3');
  if (carrier === '1' && carrierNum) return fieldError('CarrierNum', 'is empty for ECPay’s carrier');
  if (carrier === '2' && !/^[A-Z]{2}\d{14}$/.test(carrierNum))
    return fieldError('CarrierNum', 'is 2 letters and 14 digits');
  if (carrier === '3' && !/^\/[0-9A-Z+\-.]{7}$/.test(carrierNum))
    return fieldError('CarrierNum', 'is / and 7 of 0-9A-Z+-.');
  if (donation === '1') {
    if (print !== '0' || identifier) return fieldError('Donation', '1 needs Print 0 and no CustomerIdentifier');
    if (!/^\d{3,7}$/.test(str(fields.LoveCode))) return fieldError('LoveCode', 'is 3 to 7 digits');
  }
  if (identifier) {
    if (!/^\d{8}$/.test(identifier)) return fieldError('CustomerIdentifier', 'is 8 digits');
    if (!str(fields.CustomerName)) return fieldError('CustomerName', 'is required with a CustomerIdentifier');
    if (carrier === '' && print !== '1') return fieldError('Print', 'is 1 for a CustomerIdentifier without a carrier');
  }
  if ((carrier === '1' || carrier === '2') && print !== '0') return fieldError('Print', 'is 0 with CarrierType 1 or 2');
  if (carrier === '3' && !identifier && print !== '0') return fieldError('Print', 'is 0 with a carrier');
  if (print === '1' && (!str(fields.CustomerName) || !str(fields.CustomerAddr))) {
    return fieldError('CustomerAddr', 'and CustomerName are required to print');
  }
  const taxType = str(fields.TaxType);
  if (!['1', '2', '3'].includes(taxType))
    return fieldError('TaxType', 'is 1, 2 or 3 (this emulator keeps no mixed or special rates)');
  if (taxType === '2') {
    if (!['1', '2'].includes(str(fields.ClearanceMark)))
      return fieldError('ClearanceMark', 'is 1 or 2 when zero-rated');
    if (!/^7[1-9]$/.test(str(fields.ZeroTaxRateReason)))
      return fieldError('ZeroTaxRateReason', 'is 71 to 79 when zero-rated');
  }
  if (taxType === '3' && str(fields.SpecialTaxType) !== '8') return fieldError('SpecialTaxType', 'is 8 when exempt');
  if (str(fields.InvType) !== '07') return fieldError('InvType', 'is 07');
  const items = Array.isArray(fields.Items) ? (fields.Items as Record<string, unknown>[]) : [];
  if (items.length === 0) return fieldError('Items', 'are required');
  if (items.some((item) => str(item.ItemTaxType) !== '' && str(item.ItemTaxType) !== taxType)) {
    return fieldError('ItemTaxType', 'is the invoice’s TaxType');
  }
  const total = Number(fields.SalesAmount);
  if (!Number.isSafeInteger(total) || total <= 0 || itemsTotal(items) !== total)
    return { ...EMULATOR_RTN.amountsDisagree };
  return null;
}

/** round_half_up(total / 1.05) in integers. */
const untaxedOf = (total: number) => Math.floor((total * 200 + 105) / 210);

/** The sum of the items' ItemAmount when each is ItemPrice x ItemCount (vat 1), else NaN. */
function itemsTotal(items: unknown): number {
  if (!Array.isArray(items) || items.length === 0) return Number.NaN;
  let sum = 0;
  for (const item of items as Record<string, unknown>[]) {
    const [count, price, amount] = [Number(item.ItemCount), Number(item.ItemPrice), Number(item.ItemAmount)];
    if (![count, price, amount].every(Number.isFinite) || count * price !== amount || !str(item.ItemName)) {
      return Number.NaN;
    }
    sum += amount;
  }
  return sum;
}

function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
