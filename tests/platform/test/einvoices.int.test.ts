import { eventually } from '@billing/testing';
import {
  type AmegoEmulator,
  startAmegoEinvoiceEmulator,
} from '../../../services/billing/dist/einvoices/providers/amego/emulator';
import {
  type EcpayEinvoiceEmulator,
  startEcpayEinvoiceEmulator,
} from '../../../services/billing/dist/einvoices/providers/ecpay/emulator';
import { ECPAY_EINVOICE_STAGE_MERCHANT } from '../../../services/billing/dist/einvoices/providers/ecpay/merchant';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import { untilCheckoutIssuesEinvoices } from '../src/einvoice-helpers';
import { type Platform, plan } from '../src/platform';
import { capturedLogs, leaksIn } from '../src/processor-helpers';
import { type SmtpServer, messagesTo, startSmtpServer } from '../src/smtp';

jest.setTimeout(240000);

/**
 * Taiwan e-invoices through the gateway, with billing, checkout and notifications on Kafka and
 * each provider's emulator (issue 29): a buyer with a mobile barcode subscribes on the hosted
 * page and gets an e-invoice, the renewal on a test clock another; a company gets the 5 % split;
 * refunds give an allowance or void; bad choices are refused with 422; the webhooks carry it all;
 * the buyers' receipts, over SMTP, carry the e-invoice's number.
 */
describe('e-invoices through the gateway', () => {
  let platform: Platform;
  let receiver: Receiver;
  let amego: AmegoEmulator;
  let ecpay: EcpayEinvoiceEmulator;
  let smtp: SmtpServer;
  const logs = capturedLogs();
  const { baseUrl: _stage, ...ecpayMerchant } = ECPAY_EINVOICE_STAGE_MERCHANT;

  beforeAll(async () => {
    amego = await startAmegoEinvoiceEmulator({ sellerTaxId: '12345678', appKey: 'sHeq7t8G1wiQvhAuIM27' });
    ecpay = await startEcpayEinvoiceEmulator(ecpayMerchant);
    receiver = await startReceiver();
    smtp = await startSmtpServer();
    platform = await startLifecyclePlatform({
      logger: logs.logger,
      config: { SMTP_URL: smtp.url, SANDBOX_EMAILS: 'send', EMAIL_POLL_MS: '200' },
    });
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
    await amego?.close();
    await ecpay?.close();
    await smtp?.close();
  });

  /** The one receipt a buyer got, once it came. */
  const receiptTo = (address: string) =>
    eventually(() => {
      const mails = messagesTo(smtp, address);
      expect(mails).toHaveLength(1);
      return mails[0]!;
    }, 30000);

  const settingsFor = (provider: 'amego' | 'ecpay') =>
    provider === 'amego'
      ? { provider, app_key: 'sHeq7t8G1wiQvhAuIM27', seller_tax_id: '12345678', endpoint_url: amego.url }
      : {
          provider,
          merchant_id: ecpayMerchant.merchantId,
          hash_key: ecpayMerchant.hashKey,
          hash_iv: ecpayMerchant.hashIV,
          seller_tax_id: '04595257',
          endpoint_url: ecpay.url,
        };

  async function organizationOn(provider: 'amego' | 'ecpay') {
    const tools = await lifecycleOrganization(platform, receiver);
    const set = await tools.client.admin(
      'PUT',
      `/organizations/${tools.org.id}/einvoice_settings?environment=sandbox`,
      settingsFor(provider),
    );
    expect([set.status, set.body.enabled]).toEqual([200, true]);
    await untilCheckoutIssuesEinvoices(tools.send, 'pro');
    return tools;
  }

  describe.each(['amego', 'ecpay'] as const)('through %s', (provider) => {
    it("takes the buyer's choice with the embedded checkout's payment, refusing a malformed one before any charge", async () => {
      const { org, client } = await organizationOn(provider);
      const ebook = (
        await client.createProduct(
          org.id,
          plan({ slug: 'ebook', name: 'E-book', type: 'ONE_TIME', interval: null, interval_count: 1, price: 200 }),
        )
      ).body;
      const asPage = {
        'content-type': 'application/json',
        'x-recur-publishable-key': org.api_keys.sandbox.publishable_key,
        origin: 'https://shop.example',
      };
      const post = async (path: string, body: unknown) => {
        const response = await fetch(`${platform.gatewayUrl}${path}`, {
          method: 'POST',
          headers: asPage,
          body: JSON.stringify(body),
        });
        return { status: response.status, body: (await response.json()) as any };
      };
      const created = await post('/v1/checkouts', {
        productId: ebook.id,
        customerEmail: `embedded-${provider}@example.com`,
      });
      expect(created.status).toBe(201);
      const entered = await fetch(`${platform.gatewayUrl}/sandbox/card-form/${created.body.sdk_token}`, {
        method: 'POST',
        headers: { origin: 'https://shop.example' },
        body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
      });
      expect(entered.status).toBe(200);
      const id = created.body.checkout.id;
      const secret = { client_secret: created.body.checkout.client_secret ?? created.body.credit_token };

      const refused = await post(`/v1/checkouts/${id}/pay`, {
        ...secret,
        einvoice: { type: 'MOBILE_BARCODE', carrier: '/abc' },
      });
      // The SDK's Publishable Key header gets the SDK-shaped refusal (docs/embedded-checkout.md).
      expect([refused.status, refused.body.error_details[0]]).toEqual([
        422,
        expect.objectContaining({ path: 'einvoice.carrier', code: 'invalid_mobile_barcode' }),
      ]);
      const open = await fetch(`${platform.gatewayUrl}/v1/checkouts/${id}?client_secret=${secret.client_secret}`, {
        headers: asPage,
      }).then((r) => r.json() as Promise<any>);
      expect(open.checkout.session_status).toBe('OPEN');
      const paid = await post(`/v1/checkouts/${id}/pay`, {
        ...secret,
        einvoice: { type: 'DONATION', donation_code: '8585' },
      });
      expect(paid.status).toBe(200);
      const orderId = paid.body.checkout.order_id;
      const einvoice = await eventually(async () => {
        const [e] = (
          await fetch(`${platform.gatewayUrl}/v1/einvoices?order_id=${orderId}`, {
            headers: { authorization: `Bearer ${org.api_keys.sandbox.secret_key}` },
          }).then((r) => r.json() as Promise<any>)
        ).data;
        expect(e?.status).toBe('issued');
        return e;
      }, 30000);
      expect(einvoice).toMatchObject({ total: 200, buyer: { type: 'DONATION', donation_code: '8585' } });
      expect((await receiptTo(`embedded-${provider}@example.com`)).text).toContain(`電子發票號碼: ${einvoice.number}`);
    });

    it('issues for the first period and the renewal, splits a company invoice, allowances and voids refunds, and tells the webhooks', async () => {
      const { org, client, send, subscribeOnClock, advance, invoicesOf } = await organizationOn(provider);
      const einvoicesOf = async (query: string) => (await send('GET', `/einvoices?${query}`)).body.data;
      const issuedFor = (invoiceId: string) =>
        eventually(async () => {
          const [einvoice] = await einvoicesOf(`invoice_id=${invoiceId}`);
          expect(einvoice?.status).toBe('issued');
          return einvoice;
        }, 30000);

      // A session announces e-invoices; a bad choice is refused before anything.
      const badBarcode = await send('POST', '/checkout/sessions', {
        product_slug: 'pro',
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
        einvoice: { type: 'MOBILE_BARCODE', carrier: 'ABC1234' },
      });
      expect([badBarcode.status, badBarcode.body.error.details[0].code]).toEqual([422, 'invalid_mobile_barcode']);
      const badTaxId = await send('POST', '/checkout/sessions', {
        product_slug: 'pro',
        success_url: 'https://shop.example/ok',
        cancel_url: 'https://shop.example/no',
        einvoice: { type: 'B2B', tax_id: '04595258', company_name: 'Acme' },
      });
      expect([badTaxId.status, badTaxId.body.error.details[0].code]).toEqual([422, 'invalid_tax_id']);

      const { clock, subscription, session } = await subscribeOnClock(
        `barcode-${provider}@example.com`,
        '4242424242424242',
        {
          einvoice: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
        },
      );
      expect(session.einvoice_enabled).toBe(true);
      const [firstInvoice] = await invoicesOf(subscription.id);
      const first = await issuedFor(firstInvoice.id);
      expect(first).toMatchObject({
        provider,
        buyer: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
        total: 299,
        number: expect.stringMatching(/^[A-Z]{2}\d{8}$/),
      });
      const receipt = await receiptTo(`barcode-${provider}@example.com`);
      expect(receipt.text).toContain(`電子發票號碼: ${first.number}`);
      expect(receipt.html).toContain(first.number);

      await advance(clock, '2026-03-01T10:00:00Z');
      const renewal = await eventually(async () => {
        const invoices = await invoicesOf(subscription.id);
        expect(invoices).toHaveLength(2);
        expect(invoices[1].status).toBe('paid');
        return invoices[1];
      }, 60000);
      const second = await issuedFor(renewal.id);
      expect(second.number).not.toBe(first.number);
      // Found by its number, and only by a well-formed one.
      expect((await einvoicesOf(`number=${first.number}`)).map((e: { id: string }) => e.id)).toEqual([first.id]);
      expect(await einvoicesOf('number=ZZ00000000')).toEqual([]);
      const malformed = await send('GET', `/einvoices?number=${first.number.toLowerCase()}`);
      expect([malformed.status, malformed.body.error.code]).toEqual([400, 'bad_request']);
      expect(second.buyer).toEqual({ type: 'MOBILE_BARCODE', carrier: '/ABC+123' });

      const company = await subscribeOnClock(`company-${provider}@example.com`, '4242424242424242', {
        einvoice: { type: 'B2B', tax_id: '04595257', company_name: 'Acme Ltd' },
      });
      const [companyInvoice] = await invoicesOf(company.subscription.id);
      expect(await issuedFor(companyInvoice.id)).toMatchObject({ total: 299, sales_amount: 285, tax_amount: 14 });

      // A part of the renewal refunded: an allowance; the company's first period refunded whole: a void.
      expect((await send('POST', '/refunds', { invoice_id: renewal.id, amount: 100 })).status).toBe(201);
      await eventually(async () => {
        const [e] = await einvoicesOf(`invoice_id=${renewal.id}`);
        expect(e.allowances).toEqual([expect.objectContaining({ amount: 100, status: 'issued' })]);
      }, 30000);
      expect((await send('POST', '/refunds', { invoice_id: companyInvoice.id })).status).toBe(201);
      await eventually(async () => {
        const [e] = await einvoicesOf(`invoice_id=${companyInvoice.id}`);
        expect(e.status).toBe('voided');
      }, 30000);

      // An upgrade charged now: its proration invoice gets an e-invoice too, for what was paid.
      const business = (await client.createProduct(org.id, plan({ slug: 'business', price: 599 }))).body;
      const switched = await send('POST', `/subscriptions/${subscription.id}/switch`, {
        target_product_id: business.id,
      });
      expect([switched.status, switched.body.invoice?.status]).toEqual([200, 'paid']);
      const proration = await issuedFor(switched.body.invoice.id);
      expect(proration).toMatchObject({
        total: switched.body.invoice.amount_paid,
        buyer: { type: 'MOBILE_BARCODE', carrier: '/ABC+123' },
      });

      const idsOf = (type: string) => receiver.events.filter((e) => e.type === type).map((e) => e.data.object.id);
      await eventually(async () => {
        expect(idsOf('einvoice.issued')).toEqual(expect.arrayContaining([first.id, second.id]));
        expect(idsOf('einvoice.allowance_issued')).toContain(second.id);
        const voided = receiver.events.find(
          (e) => e.type === 'einvoice.voided' && e.data.object.invoice_id === companyInvoice.id,
        );
        expect(voided?.data.object).toMatchObject({ status: 'voided', livemode: false });
      }, 30000);

      // Credentials and the buyers' carriers and tax ids never reach a log line.
      const secrets = ['sHeq7t8G1wiQvhAuIM27', ecpayMerchant.hashKey, ecpayMerchant.hashIV, '/ABC+123', '04595257'];
      expect(logs.lines.length).toBeGreaterThan(100);
      expect(leaksIn(logs.lines, secrets)).toEqual([]);
    });
  });
});
