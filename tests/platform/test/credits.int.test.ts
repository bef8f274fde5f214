import { eventually } from '@billing/testing';
import { lifecycleOrganization, startLifecyclePlatform } from '../src/lifecycle-helpers';
import { type Platform, plan } from '../src/platform';

jest.setTimeout(120000);

/**
 * Issue 34's first done-when, through the gateway: a buyer pays for a CREDITS product on the
 * hosted page and their balance grows by what the product grants; the merchant's server then
 * spends them, once per key, never below zero.
 */
describe('credits bought on the hosted page', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startLifecyclePlatform();
  });
  afterAll(() => platform?.stop());

  it('grow the buyer’s balance, and the merchant spends them once per key', async () => {
    const { org, sk, client, send } = await lifecycleOrganization(platform);
    const product = await client.createProduct(
      org.id,
      plan({
        name: '500 credits',
        slug: 'credits-500',
        type: 'CREDITS',
        interval: null,
        price: 300,
        credits: { amount: 500, expires_after_days: 30 },
      }),
    );
    expect(product.body.credits).toEqual({ amount: 500, expires_after_days: 30 });

    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'credits-500',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: 'mei@example.com',
    });
    expect(session.status).toBe(201);
    const page = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      headers: { 'accept-language': 'zh-TW' },
    });
    expect(await page.text()).toContain('含 500 點，30 天內有效');
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);

    const customerId = (await send('GET', `/checkout/sessions/${session.body.id}`)).body.customer_id;
    const credits = await eventually(async () => {
      const read = await send('GET', `/customers/${customerId}/credits`);
      expect(read.body.balance).toBe(500);
      return read.body;
    }, 30000);
    expect(credits.grants).toEqual([
      expect.objectContaining({
        amount: 500,
        remaining: 500,
        source: 'purchase',
        source_id: expect.stringMatching(/^ord_/),
      }),
    ]);

    const spend = (amount: number, key: string) =>
      send('POST', `/customers/${customerId}/credits/spend`, { amount, idempotency_key: key });
    const first = await spend(120, 'report-1');
    expect([first.status, first.body.balance]).toEqual([200, 380]);
    const again = await spend(120, 'report-1');
    expect(again.body).toEqual(first.body);
    const tooMuch = await spend(381, 'report-2');
    expect(tooMuch.status).toBe(402);
    expect(tooMuch.body.error.code).toBe('insufficient_credits');
    // A paywall reads the balance with the page's key, as it reads entitlements.
    const paywall = await fetch(`${platform.gatewayUrl}/v1/customers/entitlements?customer_id=${customerId}`, {
      headers: { authorization: `Bearer ${org.api_keys.sandbox.publishable_key}` },
    });
    expect(((await paywall.json()) as { credits: unknown }).credits).toEqual({ balance: 380 });
    // The buyer sees the balance and its changes in the portal, in their language.
    const portal = await send('POST', '/portal/sessions', {
      customer_id: customerId,
      return_url: 'https://shop.example/account',
    });
    expect(portal.status).toBe(201);
    const portalPage = await (await fetch(portal.body.url, { headers: { 'accept-language': 'zh-TW' } })).text();
    expect(portalPage).toContain('點數餘額：380 點');
    expect(portalPage).toMatch(/使用<\/td>\s*<td class="amount">−120<\/td>/);
    const ledger = await send('GET', `/customers/${customerId}/credits/ledger`);
    expect(ledger.body.data.map((e: { type: string; amount: number }) => [e.type, e.amount])).toEqual([
      ['spend', -120],
      ['grant', 500],
    ]);

    // A spend names its own key: the gateway keeps an Idempotency-Key's answer only when one is sent.
    const spendWith = async (body: Record<string, unknown>, header?: string) => {
      const res = await fetch(`${platform.gatewayUrl}/v1/customers/${customerId}/credits/spend`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${sk}`,
          'content-type': 'application/json',
          ...(header ? { 'idempotency-key': header } : {}),
        },
        body: JSON.stringify(body),
      });
      return { status: res.status, headers: res.headers, body: (await res.json()) as any };
    };
    const generated = await spendWith({ amount: 1, idempotency_key: 'report-3' });
    expect([generated.status, generated.body.balance]).toEqual([200, 379]);
    const key = generated.headers.get('idempotency-key')!;
    expect(key).toMatch(/^[0-9a-f-]{36}$/);
    const reused = await spendWith({ amount: 2, idempotency_key: 'report-4' }, key);
    expect([reused.status, reused.body.balance, reused.headers.get('idempotency-replay')]).toEqual([200, 377, null]);
    const replayed = await spendWith({ amount: 2, idempotency_key: 'report-4' }, key);
    expect([replayed.body, replayed.headers.get('idempotency-replay')]).toEqual([reused.body, 'true']);
    const mismatch = await spendWith({ amount: 1, idempotency_key: 'report-3' }, key);
    expect([mismatch.status, mismatch.body.error.code]).toEqual([400, 'idempotency_key_mismatch']);
    expect((await spendWith({ amount: 1, idempotency_key: 'report-3' })).body).toEqual(generated.body);
    expect((await send('GET', `/customers/${customerId}/credits`)).body.balance).toBe(377);
  });
});
