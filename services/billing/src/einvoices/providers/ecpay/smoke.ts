import { randomBytes } from 'node:crypto';
import type { IssuedEinvoice } from '../port';
import { ecpayEinvoiceProvider } from './client';
import { ECPAY_EINVOICE_STAGE_MERCHANT, type EcpayEinvoiceMerchant } from './merchant';

/**
 * Talks to ECPay's e-invoice test environment (einvoice-stage, the public test merchant 2000132)
 * or to `baseUrl` (an emulator), to check what cannot be checked offline
 * (docs/decisions/0021-ecpay-einvoice-client.md): issues a NT$100 invoice to ECPay's member
 * carrier under a fresh RelateNumber, queries it, asks the same RelateNumber again (one invoice),
 * queries a RelateNumber never used, lists the invoice's allowances (none), voids it and queries it
 * again. Logs one line a check, saying whether the answer decrypted and checked out; never a key.
 * True when every check passed.
 */
export async function smokeEcpayEinvoice(options: {
  baseUrl?: string;
  merchant?: EcpayEinvoiceMerchant;
  log: (line: string) => void;
}): Promise<boolean> {
  const merchant = {
    ...(options.merchant ?? ECPAY_EINVOICE_STAGE_MERCHANT),
    ...(options.baseUrl ? { baseUrl: options.baseUrl } : {}),
  };
  const provider = ecpayEinvoiceProvider(merchant);
  const relateNumber = `SMOKE${Date.now().toString(36)}${randomBytes(4).toString('hex')}`.toUpperCase();
  let passed = true;
  const check = async <T>(
    what: string,
    run: () => Promise<T>,
    ok: (value: T) => boolean,
    show: (value: T) => string,
  ) => {
    try {
      const value = await run();
      const good = ok(value);
      passed &&= good;
      options.log(`${good ? 'ok  ' : 'FAIL'} ${what}: answered and decrypted; ${show(value)}`);
      return value;
    } catch (error) {
      passed = false;
      options.log(`FAIL ${what}: ${(error as Error).name}: ${(error as Error).message}`);
      return undefined;
    }
  };
  const invoiceText = (invoice: IssuedEinvoice) =>
    `${invoice.invoiceNumber}, random code ${invoice.randomCode}, issued ${invoice.issuedAt.toISOString()}`;

  options.log(
    `ECPay e-invoice smoke against ${merchant.baseUrl}, MerchantID ${merchant.merchantId}, RelateNumber ${relateNumber}`,
  );
  const request = {
    merchantOrderNo: relateNumber,
    buyer: { kind: 'member' as const },
    // ECPay asks that no real address be used on its test site.
    contact: { email: 'einvoice-smoke@example.com', name: null },
    taxType: 'taxed' as const,
    items: [{ description: 'Smoke test', quantity: 1, unitPrice: 100, amount: 100 }],
    total: 100,
    salesAmount: 100,
    taxAmount: 0,
  };
  const issued = await check(
    'Issue of a NT$100 invoice to the member carrier',
    () => provider.issue(request, new Date()),
    (outcome) => outcome.status === 'issued',
    (outcome) =>
      outcome.status === 'issued' ? `issued ${invoiceText(outcome)}` : `refused ${outcome.code}: ${outcome.message}`,
  );
  if (issued?.status !== 'issued') return false;
  await check(
    'GetIssue by RelateNumber finds it',
    () => provider.query(relateNumber, new Date()),
    (found) => found?.invoiceNumber === issued.invoiceNumber && found.randomCode === issued.randomCode && !found.voided,
    (found) => (found ? `${invoiceText(found)}, voided ${found.voided}` : 'not found'),
  );
  await check(
    'Issue of the same RelateNumber again answers the same invoice (RtnCode 5070357, then GetIssue)',
    () => provider.issue(request, new Date()),
    (outcome) => outcome.status === 'issued' && outcome.invoiceNumber === issued.invoiceNumber,
    (outcome) =>
      outcome.status === 'issued' ? `issued ${invoiceText(outcome)}` : `refused ${outcome.code}: ${outcome.message}`,
  );
  await check(
    'GetIssue of a RelateNumber never used says not found (RtnCode 2)',
    () => provider.query(`${relateNumber}X`, new Date()),
    (found) => found === null,
    (found) => (found ? `found ${invoiceText(found)}` : 'not found'),
  );
  await check(
    'GetAllowanceList (SearchType 1) lists no allowance against it',
    () => provider.listAllowances(issued.invoiceNumber, issued.issuedAt, new Date()),
    (listed) => listed.length === 0,
    (listed) => `${listed.length} allowances`,
  );
  await check(
    'Invalid voids it',
    () =>
      provider.void(
        { invoiceNumber: issued.invoiceNumber, issuedAt: issued.issuedAt, reason: 'smoke test' },
        new Date(),
      ),
    (outcome) => outcome.status === 'voided',
    (outcome) => (outcome.status === 'voided' ? 'voided' : `refused ${outcome.code}: ${outcome.message}`),
  );
  await check(
    'GetIssue then says voided (IIS_Invalid_Status 1)',
    () => provider.query(relateNumber, new Date()),
    (found) => found?.voided === true,
    (found) => (found ? `voided ${found.voided}` : 'not found'),
  );
  return passed;
}
