import { CHECKOUT_TOPIC, type EinvoiceResource } from '@billing/contracts';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually, signedFetch } from '@billing/testing';
import { billingService } from '../src';
import { einvoiceAggregate } from '../src/einvoices/aggregate';
import { customerChoice } from '../src/einvoices/choice';
import { type AmegoEmulator, startAmegoEinvoiceEmulator } from '../src/einvoices/providers/amego/emulator';
import { type EcpayEinvoiceEmulator, startEcpayEinvoiceEmulator } from '../src/einvoices/providers/ecpay/emulator';
import { ECPAY_EINVOICE_STAGE_MERCHANT } from '../src/einvoices/providers/ecpay/merchant';
import { einvoiceProviderOf } from '../src/einvoices/settings/provider-of';
import { runEinvoiceWork } from '../src/einvoices/worker';
import { admin, caller, client, eventsOf, feeds, newOrg, refundSucceeded } from './helpers';

jest.setTimeout(120000);

/** The service's clock, moved by the tests (deadlines, retries, leases). */
let clock = new Date();
const later = (ms: number) => {
  clock = new Date(clock.getTime() + ms);
};

let running: ServiceUnderTest;
let amego: AmegoEmulator;
let ecpay: EcpayEinvoiceEmulator;
const SELLER = { sellerTaxId: '12345678', appKey: 'sHeq7t8G1wiQvhAuIM27' };
const { baseUrl: _stage, ...ECPAY } = ECPAY_EINVOICE_STAGE_MERCHANT;

beforeAll(async () => {
  amego = await startAmegoEinvoiceEmulator(SELLER, () => clock);
  ecpay = await startEcpayEinvoiceEmulator(ECPAY, () => clock);
  running = await startServiceForTest(billingService, { now: () => clock });
});
afterAll(async () => {
  await running.stop();
  await amego.close();
  await ecpay.close();
});

const { call } = client(() => running);
const { product, paid, publish } = feeds(() => running);
const context = () => running.service.context;

async function amegoOrganization() {
  const org = newOrg();
  const res = await call('PUT', '/admin/einvoice_settings?environment=sandbox', admin(org), {
    provider: 'amego',
    app_key: SELLER.appKey,
    seller_tax_id: SELLER.sellerTaxId,
    endpoint_url: amego.url,
  });
  expect(res.status).toBe(200);
  return org;
}

async function ecpayOrganization() {
  const org = newOrg();
  const res = await call('PUT', '/admin/einvoice_settings?environment=sandbox', admin(org), {
    provider: 'ecpay',
    merchant_id: ECPAY.merchantId,
    hash_key: ECPAY.hashKey,
    hash_iv: ECPAY.hashIV,
    seller_tax_id: '04595257',
    endpoint_url: ecpay.url,
  });
  expect(res.status).toBe(200);
  return org;
}

const einvoicesOf = async (org: string, query: string) =>
  (await call('GET', `/v1/einvoices?${query}`, caller(org))).body.data as EinvoiceResource[];

const issuedFor = (org: string, query: string) =>
  eventually(async () => {
    const [einvoice] = await einvoicesOf(org, query);
    expect(einvoice?.status).toBe('issued');
    return einvoice!;
  }, 20000);

const oneTime = (org: string, fields: Record<string, unknown> = {}) =>
  paid(org, {
    mode: 'PAYMENT',
    amount_subtotal: 480,
    amount_total: 480,
    product: {
      id: 'prod_item',
      name: 'Tea set',
      slug: null,
      type: 'ONE_TIME',
      price: 480,
      interval: null,
      interval_count: 1,
      trial_days: null,
    },
    ...fields,
  });

function refund(org: string, orderId: string, amount: number) {
  return publish(CHECKOUT_TOPIC, refundSucceeded(org, orderId, amount, clock));
}

describe('e-invoice settings', () => {
  it('keep credentials sealed, answer without them, and refuse bad input with 422 changing nothing', async () => {
    const org = await amegoOrganization();
    const read = await call('GET', '/admin/einvoice_settings?environment=sandbox', admin(org));
    expect(read.body).toMatchObject({ provider: 'amego', enabled: true, credentials_set: true, tax_type: 'TAXED' });
    expect(JSON.stringify(read.body)).not.toContain(SELLER.appKey);
    const stored = await eventsOf(running, 'EinvoiceSettingsConfigured', org);
    expect(JSON.stringify(stored)).not.toContain(SELLER.appKey);

    const bad = await call('PUT', '/admin/einvoice_settings?environment=sandbox', admin(org), {
      provider: 'ecpay',
      merchant_id: 'abc',
      hash_key: 'short',
      hash_iv: 'ejCk326UnaZWKisg',
      seller_tax_id: '1234',
    });
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual([
      'hash_key',
      'merchant_id',
      'seller_tax_id',
    ]);
    const production = await call('PUT', '/admin/einvoice_settings?environment=production', admin(org), {
      provider: 'amego',
      app_key: SELLER.appKey,
      seller_tax_id: '12345678',
    });
    expect(production.status).toBe(422);
    expect(production.body.error.details[0]).toMatchObject({ path: 'seller_tax_id', code: 'invalid_tax_id' });
    expect((await call('GET', '/admin/einvoice_settings?environment=sandbox', admin(org))).body.provider).toBe('amego');
  });
});

describe('e-invoices through Amego', () => {
  it('issues one for a one-time purchase with the mobile barcode chosen at checkout, once however often the payment is delivered', async () => {
    const org = await amegoOrganization();
    const { order, event } = await oneTime(org, { einvoice: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' } });
    const einvoice = await issuedFor(org, `order_id=${order}`);
    expect(einvoice).toMatchObject({
      order_id: order,
      provider: 'amego',
      buyer: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
      total: 480,
      sales_amount: 480,
      tax_amount: 0,
      number: expect.stringMatching(/^[A-Z]{2}\d{8}$/),
      random_code: expect.stringMatching(/^\d{4}$/),
      pending_action: null,
    });
    const atAmego = amego.invoices.get(einvoice.merchant_order_number)!;
    expect(atAmego.invoiceNumber).toBe(einvoice.number);
    expect(atAmego.data).toMatchObject({ CarrierType: '3J0002', CarrierId1: '/ABC+123' });

    await publish(CHECKOUT_TOPIC, event);
    await runEinvoiceWork(context());
    expect(await einvoicesOf(org, `order_id=${order}`)).toHaveLength(1);
    expect([...amego.invoices.values()].filter((i) => i.orderId === einvoice.merchant_order_number)).toHaveLength(1);
    expect((await eventsOf(running, 'EinvoiceIssued', org)).length).toBe(1);
  });

  it("issues one for a subscription's first invoice, to a company with the tax split", async () => {
    const org = await amegoOrganization();
    const productId = await product(org, { name: 'Monthly', price: 299 });
    const { order } = await paid(org, {
      product_id: productId,
      customer_email: 'co@example.com',
      einvoice: { type: 'B2B', tax_id: '04595257', company_name: 'Acme Ltd' },
    });
    const first = await eventually(async () => {
      const [e] = await einvoicesOf(org, 'status=issued');
      expect(e).toBeDefined();
      return e!;
    }, 20000);
    expect(first).toMatchObject({ total: 299, sales_amount: 285, tax_amount: 14, buyer: { type: 'B2B' } });
    expect(first.invoice_id).toMatch(/^in_/);
    expect(amego.invoices.get(first.merchant_order_number)!.data).toMatchObject({
      BuyerIdentifier: '04595257',
      BuyerName: 'Acme Ltd',
    });
    expect(first.order_id).toBe(order);
  });

  it('gives an allowance for a partial refund, another for the rest, and voids one refunded whole', async () => {
    const org = await amegoOrganization();
    const partly = await oneTime(org, { customer_email: 'p@example.com' });
    const whole = await oneTime(org, { customer_email: 'w@example.com' });
    const first = await issuedFor(org, `order_id=${partly.order}`);
    await issuedFor(org, `order_id=${whole.order}`);

    await refund(org, partly.order, 100);
    const allowanced = await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${partly.order}`);
      expect(e!.allowances[0]?.status).toBe('issued');
      return e!;
    }, 20000);
    expect(allowanced).toMatchObject({ status: 'issued', amount_allowanced: 100, pending_action: null });
    await refund(org, partly.order, 380);
    await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${partly.order}`);
      expect(e!.amount_allowanced).toBe(480);
      expect(e!.status).toBe('issued');
    }, 20000);
    const allowances = [...amego.allowances.values()].filter((a) => a.invoiceNumber === first.number);
    expect(allowances.map((a) => a.totalAmount + a.taxAmount).sort()).toEqual([100, 380]);

    await refund(org, whole.order, 480);
    const voided = await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${whole.order}`);
      expect(e!.status).toBe('voided');
      return e!;
    }, 20000);
    expect(amego.invoices.get(voided.merchant_order_number)!.voidedAt).not.toBeNull();
  });

  it('retries a provider outage with backoff until it answers, and warns before the deadline', async () => {
    const org = await amegoOrganization();
    for (let i = 0; i < 40; i += 1) amego.failNext('/json/f0401', 'refuse');
    const { order } = await oneTime(org);
    const failing = await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${order}`);
      expect(e!.attempt_count).toBeGreaterThanOrEqual(1);
      expect(e!.last_error).not.toBeNull();
      return e!;
    }, 20000);
    expect(failing.status).toBe('pending');
    // Thirty-six hours of outage: attempts each time one is due, then the warning.
    for (let hour = 0; hour < 36; hour += 1) {
      later(3_600_000);
      await runEinvoiceWork(context());
    }
    const warned = (await einvoicesOf(org, `order_id=${order}`))[0]!;
    expect(warned.status).toBe('pending');
    expect(warned.deadline_warned_at).not.toBeNull();
    expect(await eventsOf(running, 'EinvoiceDeadlineApproaching', org)).toHaveLength(1);

    // Amego refuses a few attempts more (40 in all), then answers: the next attempt due issues it.
    for (let hour = 0; hour < 6 && (await einvoicesOf(org, `order_id=${order}`))[0]!.status !== 'issued'; hour += 1) {
      later(3_600_000);
      await runEinvoiceWork(context());
    }
    const issued = (await einvoicesOf(org, `order_id=${order}`))[0]!;
    expect(issued).toMatchObject({ status: 'issued', last_error: null });
  });

  it('issues once when the answer is lost, and when the process dies between the answer and the record', async () => {
    const org = await amegoOrganization();
    amego.failNext('/json/f0401', 'drop');
    const lost = await oneTime(org);
    const afterDrop = await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${lost.order}`);
      expect(e!.last_error?.code).toBe('provider_unanswered');
      return e!;
    }, 20000);
    expect(amego.invoices.has(afterDrop.merchant_order_number)).toBe(true);
    later(10 * 60_000);
    await runEinvoiceWork(context());
    const settled = (await einvoicesOf(org, `order_id=${lost.order}`))[0]!;
    expect(settled.number).toBe(amego.invoices.get(settled.merchant_order_number)!.invoiceNumber);

    // A process claims the attempt and is answered, then dies before recording it. (Amego refuses
    // the first attempt, so that the nudge after the payment leaves it pending.)
    amego.failNext('/json/f0401', 'refuse');
    const dying = await oneTime(org, { customer_email: 'd@example.com' });
    const pendingOne = await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${dying.order}`);
      expect(e!.last_error).not.toBeNull();
      return e!;
    }, 20000);
    later(2 * 60_000);
    const tenant = { organization: org, environment: 'SANDBOX' as const };
    await einvoiceAggregate.handle(
      context().store,
      pendingOne.id,
      { type: 'StartAttempt', data: { now: clock } },
      { ...tenant, occurredAt: clock },
    );
    const provider = (await einvoiceProviderOf(context(), tenant, 'amego'))!;
    const answered = await provider.issue(
      {
        merchantOrderNo: pendingOne.merchant_order_number,
        buyer: { kind: 'member' },
        contact: { email: 'd@example.com', name: null },
        taxType: 'taxed',
        items: [{ description: 'Tea set', quantity: 1, unitPrice: 480, amount: 480 }],
        total: 480,
        salesAmount: 480,
        taxAmount: 0,
      },
      clock,
    );
    expect(answered.status).toBe('issued');
    await runEinvoiceWork(context()); // within the lease: nobody touches it
    expect((await einvoicesOf(org, `order_id=${dying.order}`))[0]!.status).toBe('pending');
    later(3 * 60_000);
    await Promise.all([runEinvoiceWork(context()), runEinvoiceWork(context())]); // two replicas
    const recovered = await issuedFor(org, `order_id=${dying.order}`);
    expect(recovered.number).toBe(amego.invoices.get(recovered.merchant_order_number)!.invoiceNumber);
    expect([...amego.invoices.values()].filter((i) => i.orderId === recovered.merchant_order_number)).toHaveLength(1);
  });

  it('lets the customer change where later e-invoices go in the portal, in zh-TW, refusing a bad barcode', async () => {
    const org = await amegoOrganization();
    await oneTime(org, {
      customer_email: 'portal@example.com',
      einvoice: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
    });
    const customer = await eventually(async () => {
      const res = await call('GET', `/v1/customers?email=portal@example.com`, caller(org));
      expect(res.body.data).toHaveLength(1);
      return res.body.data[0];
    }, 20000);
    const session = await call('POST', '/v1/portal/sessions', caller(org), {
      customer_id: customer.id,
      return_url: 'https://shop.example/account',
      locale: 'zh-TW',
    });
    expect(session.status).toBe(201);
    const path = new URL(session.body.url).pathname;
    const page = (p: string) => signedFetch(`${running.service.url}${p}`).then((r) => r.text());
    expect(await page(path)).toContain('手機條碼 /ABC+123');
    const form = await page(`${path}/einvoice`);
    const csrf = /name="csrf_token" value="([^"]+)"/.exec(form)![1]!;
    const post = (fields: Record<string, string>) =>
      signedFetch(`${running.service.url}${path}/einvoice`, {
        method: 'POST',
        body: new URLSearchParams({ csrf_token: csrf, ...fields }),
        redirect: 'manual',
      });

    const bad = await post({ einvoice_type: 'MOBILE_BARCODE', einvoice_barcode: '/abc' });
    expect(bad.status).toBe(422);
    expect(await bad.text()).toContain('手機條碼為「/」加 7 碼');
    const badCompany = await post({ einvoice_type: 'B2B', einvoice_tax_id: '12345678', einvoice_company_name: 'Acme' });
    expect(badCompany.status).toBe(422);
    expect(await page(path)).toContain('手機條碼 /ABC+123');

    const good = await post({ einvoice_type: 'B2B', einvoice_tax_id: '04595257', einvoice_company_name: 'Acme Ltd' });
    expect(good.status).toBe(303);
    const back = new URL(good.headers.get('location')!, running.service.url);
    const main = await page(`${back.pathname}${back.search}`);
    expect(main).toContain('已儲存您的電子發票設定');
    expect(main).toContain('公司：Acme Ltd 統一編號 04595257');
    expect(await customerChoice(context().store, context().store.database, customer.id)).toEqual({
      type: 'B2B',
      tax_id: '04595257',
      company_name: 'Acme Ltd',
    });
  });

  it('issues nothing for an organization without e-invoices', async () => {
    const org = newOrg();
    const { order } = await oneTime(org);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await runEinvoiceWork(context());
    expect(await einvoicesOf(org, `order_id=${order}`)).toEqual([]);
  });
});

describe('e-invoices through ECPay', () => {
  it('issues to a citizen certificate and to a company, allowances a part refunded, voids one refunded whole, and survives a lost answer', async () => {
    const org = await ecpayOrganization();
    const citizen = await oneTime(org, { einvoice: { type: 'CITIZEN_CERTIFICATE', carrier: 'AB12345678901234' } });
    const issued = await issuedFor(org, `order_id=${citizen.order}`);
    const atEcpay = ecpay.invoices.get(issued.merchant_order_number)!;
    expect(atEcpay.invoiceNumber).toBe(issued.number);
    expect(atEcpay.fields).toMatchObject({ CarrierType: '2', CarrierNum: 'AB12345678901234', SalesAmount: 480 });

    const company = await oneTime(org, {
      customer_email: 'acme@example.com',
      einvoice: { type: 'B2B', tax_id: '04595257', company_name: 'Acme Ltd' },
    });
    const b2b = await issuedFor(org, `order_id=${company.order}`);
    expect(b2b).toMatchObject({ sales_amount: 457, tax_amount: 23 });
    expect(ecpay.invoices.get(b2b.merchant_order_number)!.fields).toMatchObject({
      CustomerIdentifier: '04595257',
      CustomerName: 'Acme Ltd',
    });

    await refund(org, company.order, 80);
    await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${company.order}`);
      expect(e!.allowances[0]).toMatchObject({ status: 'issued', amount: 80, number: expect.any(String) });
    }, 20000);
    await refund(org, citizen.order, 480);
    await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${citizen.order}`);
      expect(e!.status).toBe('voided');
    }, 20000);
    expect(ecpay.invoices.get(issued.merchant_order_number)!.voided).toBe(true);

    ecpay.failNext('/B2CInvoice/Issue', 'drop');
    const lost = await oneTime(org, { customer_email: 'lost@example.com' });
    await eventually(async () => {
      const [e] = await einvoicesOf(org, `order_id=${lost.order}`);
      expect(e!.last_error?.code).toBe('provider_unanswered');
    }, 20000);
    later(10 * 60_000);
    await runEinvoiceWork(context());
    const settled = await issuedFor(org, `order_id=${lost.order}`);
    expect(settled.number).toBe(ecpay.invoices.get(settled.merchant_order_number)!.invoiceNumber);
  });
});
