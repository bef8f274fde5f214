import { randomBytes } from 'node:crypto';
import { type IssueRequest, type QueriedEinvoice } from '../port';
import { type AmegoProviderOptions, amegoEinvoiceProvider } from './client';
import { AMEGO_TEST_MERCHANT, type AmegoMerchant } from './merchant';

/**
 * Checks against Amego's API what no offline test can (docs/decisions/0022): with its public test
 * seller (or `merchant`), at `baseUrl` (Amego's host by default, or an emulator's), it issues a
 * B2C invoice of NT$10 under a new OrderId (a member carrier, Amego's test account mails nothing),
 * asks for the same OrderId again (Amego's duplicate code, answered with the same invoice), queries
 * it, voids it, queries it again, and queries an OrderId never used. Each step logs one line,
 * `ok` or `FAIL`, with what was answered; never the App Key. Answers whether every step passed.
 */
export async function smokeAmegoEinvoice(options: {
  baseUrl?: string;
  merchant?: AmegoMerchant;
  log: (line: string) => void;
  /** For tests only; the real run uses the global fetch. */
  fetch?: AmegoProviderOptions['fetch'];
}): Promise<boolean> {
  const merchant = { ...(options.merchant ?? AMEGO_TEST_MERCHANT) };
  if (options.baseUrl) merchant.baseUrl = options.baseUrl;
  const provider = amegoEinvoiceProvider(merchant, { fetch: options.fetch });
  const orderNo = `SMOKE${Date.now()}${randomBytes(3).toString('hex').toUpperCase()}`;
  const request: IssueRequest = {
    merchantOrderNo: orderNo,
    buyer: { kind: 'member' },
    contact: { email: 'smoke-test@example.com', name: null },
    taxType: 'taxed',
    items: [{ description: 'Smoke test', quantity: 1, unitPrice: 10, amount: 10 }],
    total: 10,
    salesAmount: 10,
    taxAmount: 0,
  };
  options.log(`Amego e-invoice smoke test: seller ${merchant.sellerTaxId} at ${merchant.baseUrl}, OrderId ${orderNo}`);
  let passed = true;
  const check = async <T>(what: string, step: () => Promise<T>, good: (answer: T) => boolean): Promise<T | null> => {
    try {
      const answer = await step();
      const fine = good(answer);
      passed &&= fine;
      options.log(`${fine ? 'ok  ' : 'FAIL'} ${what}: ${JSON.stringify(answer)}`);
      return answer;
    } catch (error) {
      passed = false;
      options.log(`FAIL ${what}: ${(error as Error).name}: ${(error as Error).message}`);
      return null;
    }
  };
  const isInvoice = (answer: { invoiceNumber: string; randomCode: string }) =>
    /^[A-Z]{2}\d{8}$/.test(answer.invoiceNumber) && /^\d{4}$/.test(answer.randomCode);
  const same = (a: QueriedEinvoice | null, number: string) => a !== null && a.invoiceNumber === number;

  const issued = await check(
    'f0401 issues a B2C invoice (sign, fields and amounts accepted)',
    () => provider.issue(request, new Date()),
    (answer) => answer.status === 'issued' && isInvoice(answer),
  );
  if (!issued || issued.status !== 'issued') {
    options.log('FAIL the remaining steps need the invoice: stopped');
    return false;
  }
  const number = issued.invoiceNumber;
  await check(
    'f0401 with the same OrderId answers the same invoice (duplicate code, then invoice_query)',
    () => provider.issue(request, new Date()),
    (answer) => answer.status === 'issued' && answer.invoiceNumber === number,
  );
  await check(
    'invoice_query by OrderId finds it, not voided, with its random code',
    () => provider.query(orderNo, new Date()),
    (answer) => same(answer, number) && answer!.randomCode === issued.randomCode && !answer!.voided,
  );
  await check(
    'f0501 voids it',
    () => provider.void({ invoiceNumber: number, issuedAt: issued.issuedAt, reason: 'smoke test' }, new Date()),
    (answer) => answer.status === 'voided',
  );
  await check(
    'invoice_query by OrderId now says voided',
    () => provider.query(orderNo, new Date()),
    (answer) => same(answer, number) && answer!.voided,
  );
  await check(
    'invoice_query of an OrderId never used answers none (code 71)',
    () => provider.query(`${orderNo}X`, new Date()),
    (answer) => answer === null,
  );
  options.log(passed ? 'Amego e-invoice smoke test passed' : 'Amego e-invoice smoke test FAILED');
  return passed;
}
