import { hasValidCheckMac } from '@billing/checkout';
import { createLogger } from '@billing/service';
import { ebook } from '@billing/testing';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, startPlatform } from '../src/platform';
import { hiddenFieldsOf } from '../src/processor-helpers';

jest.setTimeout(120_000);

/**
 * The payment processor of each organization and environment, through the admin API
 * (docs/payments.md): the simulator in Sandbox by default, nothing in Production, ECPay with its
 * credentials sealed and never returned; and a Production payment refused before anything is
 * charged, in the merchant's words on the API and the buyer's on the hosted page.
 */
describe('payment processor settings', () => {
  let platform: Platform;
  const lines: string[] = [];
  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      logger: (name) => createLogger(name, { level: 'trace', destination: { write: (line) => lines.push(line) } }),
    });
  });
  afterAll(() => platform?.stop());

  const client = () => clientOf(platform.gatewayUrl);
  const path = (org: string, environment: string) =>
    `/organizations/${org}/payment_processor?environment=${environment}`;
  const ecpay = {
    processor: 'ecpay',
    merchant_id: '3002607',
    hash_key: 'pwFHCqoQZGmho4w6',
    hash_iv: 'EkRm7iFT261dpevs',
  };

  async function productionCheckout(org: CreatedOrganization, options = { newProduct: true }) {
    if (options.newProduct) {
      const product = await client().createProduct(org.id, ebook({ environment: 'PRODUCTION', slug: 'ebook' }));
      expect(product.status).toBe(201);
    }
    const send = jsonApi(
      () => platform.gatewayUrl,
      () => org.api_keys.production.secret_key,
    );
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'ebook',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: 'buyer@example.com',
    });
    expect([session.status, session.body?.error]).toEqual([201, undefined]);
    return session.body.id as string;
  }

  const payJson = (sessionId: string) =>
    fetch(`${platform.gatewayUrl}/checkout/${sessionId}/pay`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it('answers the defaults, keeps ECPay credentials sealed and unreturned, and refuses bad input in the envelope', async () => {
    const org = await client().createOrganization();
    expect((await client().admin('GET', path(org.id, 'sandbox'))).body).toMatchObject({
      object: 'payment_processor',
      organization_id: org.id,
      environment: 'sandbox',
      processor: 'sandbox',
      credentials_set: false,
      updated_at: null,
    });
    expect((await client().admin('GET', path(org.id, 'production'))).body).toMatchObject({ processor: 'none' });

    const set = await client().admin('PUT', path(org.id, 'production'), ecpay);
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({
      processor: 'ecpay',
      merchant_id: '3002607',
      endpoint_url: 'https://payment.ecpay.com.tw',
      methods: ['card', 'atm', 'cvs'],
      credentials_set: true,
    });
    const read = await client().admin('GET', path(org.id, 'production'));
    expect(read.body).toEqual(set.body);
    for (const text of [JSON.stringify(set.body), JSON.stringify(read.body), lines.join('\n')]) {
      expect(text).not.toContain(ecpay.hash_key);
      expect(text).not.toContain(ecpay.hash_iv);
    }
    // The stored event holds them sealed only.
    const { rows } = await platform.infrastructure.database.query<{ data: unknown }>(
      `SELECT data FROM ${platform.checkout!.service.context.store.tables.schema}.events WHERE stream_id = $1`,
      [`payment_processor-${org.id}-PRODUCTION`],
    );
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows[0]!.data)).not.toContain(ecpay.hash_key);
    expect(JSON.stringify(rows[0]!.data)).toMatch(/"sealed_credentials":"v1\./);

    for (const [body, field] of [
      [{ ...ecpay, hash_key: 'short' }, 'hash_key'],
      [{ ...ecpay, merchant_id: 'abc' }, 'merchant_id'],
      [{ ...ecpay, methods: ['card', 'card'] }, 'methods'],
      [{ ...ecpay, endpoint_url: 'http://127.0.0.1:1' }, 'endpoint_url'],
      [{ processor: 'sandbox' }, 'processor'],
      [{ processor: 'paypal' }, 'processor'],
    ] as const) {
      const refused = await client().admin('PUT', path(org.id, 'production'), body);
      expect([field, refused.status, refused.body.error?.code]).toEqual([field, 422, 'validation_error']);
      expect(refused.body.error.details).toEqual(
        expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining(field) })]),
      );
    }
    expect((await client().admin('GET', path(org.id, 'production'))).body).toEqual(set.body);
    expect((await client().admin('GET', `/organizations/${org.id}/payment_processor?environment=staging`)).status).toBe(
      400,
    );
    expect((await client().admin('GET', path('org_missing', 'sandbox'))).status).toBe(404);

    const removed = await client().admin('DELETE', path(org.id, 'production'));
    expect(removed.body).toMatchObject({ processor: 'none', credentials_set: false });
  });

  it("sets PAYUNi with its keys sealed, Production on PAYUNi's own site, and refuses bad PAYUNi input", async () => {
    const org = await client().createOrganization();
    const payuni = {
      processor: 'payuni',
      merchant_id: 'S01234567',
      hash_key: '12345678901234567890123456789012',
      hash_iv: '1234567890123456',
    };
    const set = await client().admin('PUT', path(org.id, 'production'), payuni);
    expect(set.body).toMatchObject({
      processor: 'payuni',
      merchant_id: 'S01234567',
      endpoint_url: 'https://api.payuni.com.tw',
      methods: ['card', 'atm', 'cvs'],
      credentials_set: true,
    });
    expect(JSON.stringify(set.body)).not.toContain(payuni.hash_key);
    for (const [body, field] of [
      [{ ...payuni, hash_key: '1234567890123456' }, 'hash_key'],
      [{ ...payuni, hash_iv: '12345678901234567890123456789012' }, 'hash_iv'],
      [{ ...payuni, merchant_id: 'S0 1' }, 'merchant_id'],
      [{ ...payuni, methods: ['atm'] }, 'methods'],
      [{ ...payuni, endpoint_url: 'http://127.0.0.1:1' }, 'endpoint_url'],
    ] as const) {
      const refused = await client().admin('PUT', path(org.id, 'production'), body);
      expect([field, refused.status, refused.body.error?.code]).toEqual([field, 422, 'validation_error']);
    }
    expect((await client().admin('GET', path(org.id, 'production'))).body).toEqual(set.body);
  });

  it('Production without a processor refuses the payment with a code and a merchant sentence, nothing charged', async () => {
    const org = await client().createOrganization();
    const sessionId = await productionCheckout(org);
    const refused = await payJson(sessionId);
    expect(refused.status).toBe(402);
    expect(refused.body.error).toMatchObject({
      code: 'payment_required',
      message: expect.stringContaining('payment_processor?environment=production'),
      details: [{ path: 'payment', code: 'processor_not_configured', message: expect.any(String) }],
    });
    const send = jsonApi(
      () => platform.gatewayUrl,
      () => org.api_keys.production.secret_key,
    );
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body).toMatchObject({ status: 'OPEN' });
  });

  it.each([
    ['zh-TW', '這家商店尚未開放付款，未收取任何費用。請聯絡商家。'],
    ['en', 'This shop cannot take payments yet. Nothing was charged. Please contact the merchant.'],
  ])(
    'the hosted page tells a %s buyer the shop cannot take payments yet, not a developer sentence',
    async (language, text) => {
      const org = await client().createOrganization();
      const sessionId = await productionCheckout(org);
      const page = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
        method: 'POST',
        headers: { 'accept-language': language },
        body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
      });
      const html = await page.text();
      expect(page.status).toBe(402);
      expect(html).toContain(text);
      expect(html).not.toContain('payment_processor');
    },
  );

  it("Production with ECPay set takes the payment on ECPay's production site; a card sent to the pay API is refused", async () => {
    const org = await client().createOrganization();
    expect((await client().admin('PUT', path(org.id, 'production'), ecpay)).status).toBe(200);
    const sessionId = await productionCheckout(org);
    // The hosted page offers ECPay's methods, and the buyer's choice is a form signed with the
    // organization's keys that the browser posts to ECPay's production AioCheckOut.
    const page = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, { headers: { 'accept-language': 'en' } });
    const offered = await page.text();
    expect(offered).toContain('ATM transfer (virtual account)');
    expect(offered).not.toContain('Sandbox');
    const redirect = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      method: 'POST',
      body: new URLSearchParams({ method: 'card' }),
    });
    const form = await redirect.text();
    expect(/action="([^"]+)" id="processor-form"/.exec(form)![1]).toBe(
      'https://payment.ecpay.com.tw/Cashier/AioCheckOut/V5',
    );
    const fields = hiddenFieldsOf(form);
    expect(fields).toMatchObject({ MerchantID: '3002607', ChoosePayment: 'Credit', TotalAmount: '300' });
    expect(hasValidCheckMac(fields, { hashKey: ecpay.hash_key, hashIV: ecpay.hash_iv })).toBe(true);
    // A card typed into the platform is never charged through ECPay (cards are typed on ECPay's page).
    const refused = await payJson(await productionCheckout(org, { newProduct: false }));
    expect(refused.status).toBe(402);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ code: 'processor_unavailable' })]);
  });
});
