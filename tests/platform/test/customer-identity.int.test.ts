import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, jsonApi, type Platform, plan, startPlatform } from '../src/platform';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';

jest.setTimeout(180000);

type Reply = { status: number; body: any };

/**
 * One buyer is one customer in every service (docs/customer-identity.md): checkout resolves
 * the buyer with billing when a session opens and again, creating them, before the charge;
 * promotions counts and restricts by every name of the customer.
 */
describe('one customer across services, through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let sk: string;
  let receiver: Receiver;
  let couponId: string;
  let codeCount = 0;

  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  const slow = <T>(check: () => Promise<T>) => eventually(check, 30000, 200);

  const openSession = (fields: Record<string, unknown>, key = sk) =>
    send(
      'POST',
      '/checkout/sessions',
      { success_url: 'https://shop.example/thanks', cancel_url: 'https://shop.example/cancel', ...fields },
      key,
    );
  /** The hosted page's form; a 303 is a payment, anything else the page that says why not. */
  const payPage = async (sessionId: string, email: string) => {
    const response = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ email, name: 'Buyer', card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    return { status: response.status, page: await response.text() };
  };
  const sessionOf = async (id: string) => (await send('GET', `/checkout/sessions/${id}`)).body;
  const newCode = async (fields: Record<string, unknown> = {}) => {
    const created = await send('POST', '/promotion-codes', {
      coupon_id: couponId,
      code: `ID${++codeCount}X`,
      ...fields,
    });
    expect(created.status).toBe(201);
    return created.body.data as { id: string; code: string };
  };
  /** A paid checkout without a code, so that the buyer becomes a customer with an order. */
  const customerWithOrder = async (email: string, fields: Record<string, unknown> = {}) => {
    const session = await openSession({ product_slug: 'ebook', customer_email: email, ...fields });
    expect((await payPage(session.body.id, email)).status).toBe(303);
    return slow(async () => {
      const list = await send('GET', `/customers?email=${encodeURIComponent(email)}`);
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0].orders_count).toBe(1);
      return list.body.data[0] as { id: string; external_id: string | null };
    });
  };
  const promoRefusal = (reply: Reply) => reply.body?.error?.details?.[0]?.code;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      // The webhook receiver is on 127.0.0.1: the embedded default's setting, made explicit.
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'pro', name: 'Pro', price: 300 }));
    await client.createProduct(
      org.id,
      plan({ slug: 'ebook', name: 'E-book', type: 'ONE_TIME', interval: null, price: 200 }),
    );
    const coupon = await send('POST', '/coupons', {
      name: 'Ten',
      discount_type: 'PERCENTAGE',
      discount_amount: 10,
      duration: 'once',
    });
    couponId = coupon.body.id;
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['checkout.completed', 'promotion_code.redeemed'],
    });
    expect(endpoint.status).toBe(201);
  });
  afterAll(async () => {
    await platform.stop();
    await receiver.close();
  });

  it('names the customer billing provisions on the session, the order, the redemption and their webhooks', async () => {
    const code = await newCode();
    const session = await openSession({ product_slug: 'pro', promotion_code: code.code });
    expect(session.status).toBe(201);
    expect(await payPage(session.body.id, 'New.Buyer@example.com')).toMatchObject({ status: 303 });

    const customer = await slow(async () => {
      const list = await send('GET', '/customers?email=new.buyer@example.com');
      expect(list.body.data).toHaveLength(1);
      return list.body.data[0];
    });
    const subscription = await slow(async () => {
      const list = await send('GET', `/subscriptions?customer_id=${customer.id}`);
      expect(list.body.subscriptions).toHaveLength(1);
      return list.body.subscriptions[0];
    });
    expect(await sessionOf(session.body.id)).toMatchObject({
      status: 'COMPLETE',
      customer_id: customer.id,
      subscription_id: subscription.id,
    });
    await slow(async () => {
      const redemptions = await send('GET', `/promotion-codes/${code.id}/redemptions?customerId=${customer.id}`);
      expect(redemptions.body.data.redemptions).toEqual([
        expect.objectContaining({ customer_id: customer.id, status: 'ACTIVE' }),
      ]);
    });
    const webhooks = await slow(async () => {
      const completed = receiver.events.find(
        (e) => e.type === 'checkout.completed' && e.data.object.id === session.body.id,
      );
      const redeemed = receiver.events.find(
        (e) => e.type === 'promotion_code.redeemed' && e.data.object.promotion_code_id === code.id,
      );
      expect(completed && redeemed).toBeTruthy();
      return { completed: completed!, redeemed: redeemed! };
    });
    expect(webhooks.completed.data.object).toMatchObject({
      customer_id: customer.id,
      subscription_id: subscription.id,
    });
    expect(webhooks.redeemed.data.object).toMatchObject({ customer_id: customer.id, status: 'ACTIVE' });

    const validated = await send('POST', '/promotion-codes/validate', { code: code.code, customer_id: customer.id });
    expect(validated.body).toMatchObject({ valid: false, error_code: 'PROMO_CODE_ALREADY_USED' });
  });

  it('refuses a once-per-customer code to the same email before the second payment', async () => {
    const code = await newCode();
    const first = await openSession({ product_slug: 'ebook', promotion_code: code.code });
    expect((await payPage(first.body.id, 'twice@example.com')).status).toBe(303);

    // Named at creation by email: refused when the session opens.
    await slow(async () => {
      const again = await openSession({
        product_slug: 'ebook',
        promotion_code: code.code,
        customer_email: 'Twice@example.com',
      });
      expect({ status: again.status, code: promoRefusal(again) }).toEqual({
        status: 422,
        code: 'PROMO_CODE_ALREADY_USED',
      });
    });
    // Anonymous at creation, the same email typed on the page: refused before any charge.
    const second = await openSession({ product_slug: 'ebook', promotion_code: code.code });
    expect(second.status).toBe(201);
    const refused = await payPage(second.body.id, 'twice@example.com');
    expect(refused.status).toBe(422);
    expect(refused.page).toContain('already used this promotion code. Nothing was charged.');
    expect(await sessionOf(second.body.id)).toMatchObject({ status: 'OPEN', customer_id: null });
    await slow(async () => {
      const redemptions = await send('GET', `/promotion-codes/${code.id}/redemptions`);
      expect(redemptions.body.data).toMatchObject({ total: 1, active_count: 1 });
    });
  });

  it('lets exactly one of two open sessions of one customer redeem a code limited to one per customer', async () => {
    const code = await newCode();
    // Nobody is named alike at creation (external id, then nobody), so both sessions hold the code.
    const byExternalId = await openSession({
      product_slug: 'ebook',
      promotion_code: code.code,
      external_customer_id: 'u_pair',
    });
    const anonymous = await openSession({ product_slug: 'ebook', promotion_code: code.code });
    expect([byExternalId.status, anonymous.status]).toEqual([201, 201]);

    const results = await Promise.all([
      payPage(byExternalId.body.id, 'pair@example.com'),
      payPage(anonymous.body.id, 'PAIR@example.com'),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([303, 422]);
    const customer = await slow(async () => {
      const list = await send('GET', '/customers?email=pair@example.com');
      expect(list.body.data).toHaveLength(1);
      return list.body.data[0];
    });
    await slow(async () => {
      const redemptions = await send('GET', `/promotion-codes/${code.id}/redemptions?customerId=${customer.id}`);
      expect(redemptions.body.data.redemptions).toEqual([expect.objectContaining({ status: 'ACTIVE' })]);
    });
    const statuses = [(await sessionOf(byExternalId.body.id)).status, (await sessionOf(anonymous.body.id)).status];
    expect(statuses.sort()).toEqual(['COMPLETE', 'OPEN']);
  });

  it('accepts a restricted code from its customer named by email, external id or id, and no one else', async () => {
    const customer = await customerWithOrder('vip@example.com', { external_customer_id: 'vip_1' });
    const code = await newCode({ restricted_to_customer_id: customer.id, max_redemptions_per_customer: 5 });
    for (const names of [
      { customer_email: 'VIP@example.com' },
      { external_customer_id: 'vip_1' },
      { customer_id: customer.id },
    ]) {
      const session = await openSession({ product_slug: 'ebook', promotion_code: code.code, ...names });
      expect({ names, status: session.status, discount: session.body.discount?.amount }).toEqual({
        names,
        status: 201,
        discount: 20,
      });
    }
    const stranger = await openSession({
      product_slug: 'ebook',
      promotion_code: code.code,
      customer_email: 'other@example.com',
    });
    expect(promoRefusal(stranger)).toBe('PROMO_CODE_RESTRICTED');
    await slow(async () => {
      const validated = await send('POST', '/promotion-codes/validate', { code: code.code, external_id: 'vip_1' });
      expect(validated.body.valid).toBe(true);
    });
  });

  it('decides new and existing customers on completed orders, whatever names the customer', async () => {
    await customerWithOrder('loyal@example.com', { external_customer_id: 'loyal_1' });
    const newOnly = await newCode({ customer_eligibility: 'NEW_CUSTOMERS' });
    const existingOnly = await newCode({ customer_eligibility: 'EXISTING_CUSTOMERS' });
    await slow(async () => {
      const refused = await openSession({
        product_slug: 'ebook',
        promotion_code: newOnly.code,
        customer_email: 'Loyal@example.com',
      });
      expect(promoRefusal(refused)).toBe('PROMO_CODE_NEW_CUSTOMERS_ONLY');
    });
    const accepted = await openSession({
      product_slug: 'ebook',
      promotion_code: existingOnly.code,
      customer_email: 'loyal@example.com',
    });
    expect(accepted.status).toBe(201);
    const byExternalId = await send('POST', '/promotion-codes/validate', {
      code: newOnly.code,
      external_id: 'loyal_1',
    });
    expect(byExternalId.body.error_code).toBe('PROMO_CODE_NEW_CUSTOMERS_ONLY');
    const stranger = await openSession({
      product_slug: 'ebook',
      promotion_code: existingOnly.code,
      customer_email: 'new@example.com',
    });
    expect(promoRefusal(stranger)).toBe('PROMO_CODE_EXISTING_CUSTOMERS_ONLY');
  });

  it('sells to a named customer id (Secret Key only), prefilled with their email', async () => {
    const customer = await customerWithOrder('named@example.com');
    const session = await openSession({ product_slug: 'ebook', customer_id: customer.id });
    expect(session.status).toBe(201);
    expect(await sessionOf(session.body.id)).toMatchObject({
      customer_id: customer.id,
      customer_email: 'named@example.com',
    });
    const unknown = await openSession({ product_slug: 'ebook', customer_id: 'cus_000000000000000000000000' });
    expect(unknown.status).toBe(404);
    const mismatch = await openSession({
      product_slug: 'ebook',
      customer_id: customer.id,
      customer_email: 'else@example.com',
    });
    expect(mismatch.status).toBe(422);
    const publishable = await openSession(
      { product_slug: 'ebook', customer_id: customer.id },
      org.api_keys.sandbox.publishable_key,
    );
    expect(publishable.status).toBe(400);
  });

  it('refuses on the hosted page, before any charge, an email that already subscribes to the plan', async () => {
    const first = await openSession({ product_slug: 'pro' });
    expect((await payPage(first.body.id, 'subscriber@example.com')).status).toBe(303);
    await slow(async () => {
      const list = await send('GET', '/subscriptions?limit=100');
      expect(
        list.body.subscriptions.some((s: { checkout_session_id: string }) => s.checkout_session_id === first.body.id),
      ).toBe(true);
    });
    const second = await openSession({ product_slug: 'pro' });
    const refused = await payPage(second.body.id, 'Subscriber@example.com');
    expect(refused.status).toBe(409);
    expect(refused.page).toContain('already has a subscription to this product. Nothing was charged.');
    expect(await sessionOf(second.body.id)).toMatchObject({ status: 'OPEN', customer_id: null });
    // Another email pays the same session.
    expect((await payPage(second.body.id, 'someone.else@example.com')).status).toBe(303);
  });
});
