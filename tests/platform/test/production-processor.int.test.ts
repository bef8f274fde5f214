import {
  ECPAY_STAGING_MERCHANT,
  type EcpayEmulator,
  type PayuniEmulator,
  startEcpayEmulator,
  startPayuniEmulator,
} from '@billing/checkout';
import { ebook, eventually } from '@billing/testing';
import { type CreatedOrganization, type Platform, clientOf, jsonApi, startPlatform } from '../src/platform';
import { PAYUNI_TEST_MERCHANT, hiddenFieldsOf } from '../src/processor-helpers';

jest.setTimeout(120_000);

const PRODUCTION_SITES = { payuni: 'https://api.payuni.com.tw', ecpay: 'https://payment.ecpay.com.tw' };

/**
 * Production with a processor configured charges through it (docs/payments.md): its addresses
 * are the processors' production sites, which cannot be reached from here, so this test reroutes
 * those two addresses, at the network boundary (the process's `fetch`), to the emulators. Nothing
 * else is changed: the organization's Production settings, keys and checkout code are the real ones.
 */
describe('Production takes payments through the processor it is set to', () => {
  let platform: Platform;
  let payuni: PayuniEmulator;
  let ecpay: EcpayEmulator;
  const realFetch = globalThis.fetch;
  const asked: string[] = [];

  beforeAll(async () => {
    [payuni, ecpay] = await Promise.all([
      startPayuniEmulator(PAYUNI_TEST_MERCHANT),
      startEcpayEmulator(ECPAY_STAGING_MERCHANT),
    ]);
    globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input instanceof Request ? input.url : input);
      for (const [name, site] of Object.entries(PRODUCTION_SITES)) {
        if (url.startsWith(site)) {
          asked.push(url);
          const emulator = name === 'payuni' ? payuni.url : ecpay.url;
          return realFetch(url.replace(site, emulator), init);
        }
      }
      return realFetch(input, init);
    };
    platform = await startPlatform({ checkout: true, config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' } });
  });
  afterAll(async () => {
    globalThis.fetch = realFetch;
    await platform?.stop();
    await payuni?.close();
    await ecpay?.close();
  });

  async function productionShop(processor: Record<string, unknown>) {
    const client = clientOf(platform.gatewayUrl);
    const org: CreatedOrganization = await client.createOrganization();
    const set = await client.admin(
      'PUT',
      `/organizations/${org.id}/payment_processor?environment=production`,
      processor,
    );
    expect(set.status).toBe(200);
    expect(
      (await client.createProduct(org.id, ebook({ environment: 'PRODUCTION', slug: 'ebook', price: 480 }))).status,
    ).toBe(201);
    const send = jsonApi(
      () => platform.gatewayUrl,
      () => org.api_keys.production.secret_key,
    );
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'ebook',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: 'live-buyer@example.com',
    });
    expect(session.status).toBe(201);
    return { send, sessionId: session.body.id as string };
  }

  it("PAYUNi: the card fields come from PAYUNi's production site and the card is charged there", async () => {
    const { send, sessionId } = await productionShop({
      processor: 'payuni',
      merchant_id: PAYUNI_TEST_MERCHANT.merchantId,
      hash_key: PAYUNI_TEST_MERCHANT.hashKey,
      hash_iv: PAYUNI_TEST_MERCHANT.hashIV,
    });
    const page = await realFetch(`${platform.gatewayUrl}/checkout/${sessionId}`);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain('<script src="https://vendor.payuni.com.tw/sdk/uni-payment.js"></script>');
    expect(html).toContain('data-env="P"');
    expect(html).not.toContain('Sandbox');
    const sdkToken = /data-sdk-token="([^"]+)"/.exec(html)![1]!;
    const bound = await realFetch(`${payuni.url}/sdk/bind/${encodeURIComponent(sdkToken)}`, {
      method: 'POST',
      body: new URLSearchParams({ CardNo: '4242424242424242', CardExp: '12/34', CardCvc: '123' }),
    });
    expect(bound.status).toBe(200);
    const paid = await realFetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({}),
    });
    expect([paid.status, paid.headers.get('location')]).toEqual([
      303,
      expect.stringContaining('https://shop.example/ok'),
    ]);
    expect((await send('GET', `/checkout/sessions/${sessionId}`)).body).toMatchObject({
      status: 'COMPLETE',
      livemode: true,
    });
    expect(asked.some((url) => url === `${PRODUCTION_SITES.payuni}/api/iframe/merchant_trade`)).toBe(true);
    expect([...payuni.trades.values()].filter((t) => t.status === 'paid')).toHaveLength(1);
  });

  it("ECPay: the buyer's form goes to ECPay's production site, and ECPay's answer there completes the order", async () => {
    const { send, sessionId } = await productionShop({
      processor: 'ecpay',
      merchant_id: ECPAY_STAGING_MERCHANT.merchantId,
      hash_key: ECPAY_STAGING_MERCHANT.hashKey,
      hash_iv: ECPAY_STAGING_MERCHANT.hashIV,
    });
    const redirect = await realFetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      method: 'POST',
      body: new URLSearchParams({ method: 'card' }),
    });
    const form = await redirect.text();
    const action = /action="([^"]+)" id="processor-form"/.exec(form)![1]!;
    expect(action).toBe(`${PRODUCTION_SITES.ecpay}/Cashier/AioCheckOut/V5`);
    // The buyer's browser posts the form to ECPay (here the emulator in its place) and pays.
    const fields = hiddenFieldsOf(form);
    const atEcpay = await realFetch(action.replace(PRODUCTION_SITES.ecpay, ecpay.url), {
      method: 'POST',
      body: new URLSearchParams(fields),
    });
    expect(atEcpay.status).toBe(200);
    await ecpay.pay(fields.MerchantTradeNo!, { notify: false });
    // ECPay's post is lost: the buyer's return asks ECPay's production QueryTradeInfo, which says paid.
    const back = await realFetch(`${platform.gatewayUrl}/checkout/${sessionId}/ecpay/return`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ RtnCode: '1' }),
    });
    expect(back.headers.get('location')).toContain('https://shop.example/ok');
    await eventually(async () =>
      expect((await send('GET', `/checkout/sessions/${sessionId}`)).body).toMatchObject({ status: 'COMPLETE' }),
    );
    expect(asked).toContain(`${PRODUCTION_SITES.ecpay}/Cashier/QueryTradeInfo/V5`);
  });
});
