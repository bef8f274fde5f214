import { eventually } from '@billing/testing';
import { clientOf, type CreatedOrganization, type Platform, plan, startPlatform } from '../src/platform';

jest.setTimeout(180000);

/**
 * Billing through the gateway: a paid checkout becomes a customer with a subscription, read
 * through the customers, subscriptions and entitlements API with their rules and error codes.
 */
describe('billing through the gateway', () => {
  let platform: Platform;
  let client: ReturnType<typeof clientOf>;
  let org: CreatedOrganization;
  let sk: string;

  type Reply = { status: number; body: any };
  const send = async (method: string, path: string, key: string, body?: unknown): Promise<Reply> => {
    const response = await fetch(`${platform.gatewayUrl}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined };
  };
  const get = (path: string, key = sk) => send('GET', path, key);
  const patch = (path: string, body: unknown, key = sk) => send('PATCH', path, key, body);
  const slow = <T>(check: () => Promise<T>) => eventually(check, 30000, 200);

  /** The buyer's side: the hosted page's form posted with the sandbox success card. */
  const payPage = async (sessionId: string, email: string, name = 'Buyer') => {
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      method: 'POST',
      redirect: 'manual',
      body: new URLSearchParams({ email, name, card_number: '4242424242424242', exp: '12/34', cvc: '123' }),
    });
    expect({ status: paid.status, page: paid.status === 303 ? '' : await paid.text() }).toEqual({
      status: 303,
      page: '',
    });
  };
  const buy = async (slug: string, email: string, fields: Record<string, unknown> = {}, name?: string) => {
    const created = await send('POST', '/checkout/sessions', sk, {
      product_slug: slug,
      success_url: 'https://shop.example/thanks',
      cancel_url: 'https://shop.example/cancel',
      ...fields,
    });
    expect(created.status).toBe(201);
    await payPage(created.body.id, email, name);
    return created.body.id as string;
  };
  const customerByEmail = (email: string, orders = 1) =>
    slow(async () => {
      const list = await get(`/customers?email=${encodeURIComponent(email)}`);
      expect(list.status).toBe(200);
      expect(list.body.data).toHaveLength(1);
      expect(list.body.data[0].orders_count).toBe(orders);
      return list.body.data[0];
    });

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000' },
    });
    client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization();
    sk = org.api_keys.sandbox.secret_key;
    await client.createProduct(org.id, plan({ slug: 'pro', name: 'Pro', price: 299 }));
    await client.createProduct(
      org.id,
      plan({ slug: 'team', name: 'Team', price: 999, interval: 'year', trial_days: 14 }),
    );
    await client.createProduct(
      org.id,
      plan({ slug: 'sticker', name: 'Sticker', type: 'ONE_TIME', interval: null, price: 50 }),
    );
  });
  afterAll(() => platform?.stop());

  describe('a buyer pays', () => {
    it('from a payment link: the merchant reads the customer, the subscription and the entitlement', async () => {
      const link = await send('POST', '/payment-links', sk, { productSlug: 'pro' });
      expect(link.status).toBe(201);
      const opened = await fetch(link.body.url, { redirect: 'manual' });
      expect(opened.status).toBe(303);
      const sessionId = opened.headers.get('location')!.split('/').pop()!;
      await payPage(sessionId, 'linked@example.com', 'Linda');

      const customer = await customerByEmail('linked@example.com');
      expect(customer).toMatchObject({
        object: 'customer',
        id: expect.stringMatching(/^cus_/),
        email: 'linked@example.com',
        name: 'Linda',
        external_id: null,
        status: 'ACTIVE',
        subscriptions_count: 1,
        orders_count: 1,
        livemode: false,
      });
      const single = await get(`/customers/${customer.id}`);
      expect(single.status).toBe(200);
      expect(single.body.subscriptions).toEqual([
        {
          id: expect.stringMatching(/^sub_/),
          status: 'ACTIVE',
          current_period_start: expect.any(String),
          current_period_end: expect.any(String),
          product: { id: expect.stringMatching(/^prod_/), name: 'Pro', slug: 'pro' },
        },
      ]);
      const subscriptionId = single.body.subscriptions[0].id;
      const subscription = await get(`/subscriptions/${subscriptionId}`);
      expect(subscription.status).toBe(200);
      expect(subscription.body).toMatchObject({
        object: 'subscription',
        id: subscriptionId,
        customer_id: customer.id,
        status: 'ACTIVE',
        price: 299,
        interval: 'month',
        interval_count: 1,
        trial_end: null,
        cancel_at_period_end: false,
        checkout_session_id: sessionId,
        livemode: false,
      });
      const start = new Date(subscription.body.current_period_start);
      const end = new Date(subscription.body.current_period_end);
      expect(end.getUTCMonth()).toBe((start.getUTCMonth() + 1) % 12);
      expect(end.getUTCDate()).toBeLessThanOrEqual(start.getUTCDate());

      const entitlements = await get(`/customers/entitlements?email=linked@example.com`);
      expect(entitlements).toEqual({
        status: 200,
        body: {
          entitlements: [
            {
              product: 'pro',
              product_id: subscription.body.product.id,
              status: 'active',
              subscription_id: subscriptionId,
              current_period_end: subscription.body.current_period_end,
            },
          ],
          customer: { id: customer.id, external_id: null, email: 'linked@example.com', name: 'Linda' },
          subscription: {
            id: subscriptionId,
            status: 'ACTIVE',
            product: subscription.body.product,
            current_period_end: subscription.body.current_period_end,
          },
          credits: { balance: 0 },
        },
      });
    });

    it('shows the subscription id on the checkout session', async () => {
      const sessionId = await buy('pro', 'session-sub@example.com');
      const customer = await customerByEmail('session-sub@example.com');
      const subscriptions = await get(`/subscriptions?customer_id=${customer.id}`);
      const subscriptionId = subscriptions.body.subscriptions[0].id;
      await slow(async () => {
        const session = await get(`/checkout/sessions/${sessionId}`);
        expect(session.body.subscription_id).toBe(subscriptionId);
      });
    });

    it('starts a plan with trial days in TRIAL, applies the external id, and keeps the name of a known customer', async () => {
      await buy(
        'team',
        'trial@example.com',
        { customer_email: 'trial@example.com', external_customer_id: 'u-100' },
        'Tess',
      );
      const customer = await customerByEmail('trial@example.com');
      expect(customer).toMatchObject({ name: 'Tess', external_id: 'u-100' });
      const [subscription] = (await get(`/subscriptions?customer_id=${customer.id}`)).body.subscriptions;
      expect(subscription).toMatchObject({ status: 'TRIAL', interval: 'year', product: { slug: 'team' } });
      const start = Date.parse(subscription.current_period_start);
      expect(Date.parse(subscription.trial_end)).toBe(start + 14 * 24 * 3600 * 1000);

      await buy('sticker', 'trial@example.com', { customer_email: 'trial@example.com' }, 'Someone Else');
      const again = await customerByEmail('trial@example.com', 2);
      expect(again).toMatchObject({ id: customer.id, name: 'Tess', external_id: 'u-100', subscriptions_count: 1 });
      const entitlements = await get('/customers/entitlements?external_id=u-100');
      expect(entitlements.body.entitlements).toEqual([
        expect.objectContaining({ product: 'team', status: 'trialing' }),
      ]);
      expect(entitlements.body.subscription).toMatchObject({ id: subscription.id, status: 'TRIAL' });
    });

    it('answers 409 conflict with the existing subscription when the customer already subscribes', async () => {
      await buy('pro', 'dup@example.com', { customer_email: 'dup@example.com' });
      const customer = await customerByEmail('dup@example.com');
      const [existing] = (await get(`/subscriptions?customer_id=${customer.id}`)).body.subscriptions;
      const again = await send('POST', '/checkout/sessions', sk, {
        product_slug: 'pro',
        customer_email: 'dup@example.com',
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/cancel',
      });
      expect(again.status).toBe(409);
      expect(again.body.error).toMatchObject({
        code: 'conflict',
        details: [{ existing_subscription_id: existing.id, status: 'ACTIVE' }],
      });
    });

    it('refuses on the page, before charging, an email that subscribes already', async () => {
      await buy('pro', 'already@example.com', { customer_email: 'already@example.com' });
      const customer = await customerByEmail('already@example.com');
      await slow(async () =>
        expect((await get(`/subscriptions?customer_id=${customer.id}`)).body.subscriptions).toHaveLength(1),
      );
      const second = await send('POST', '/checkout/sessions', sk, {
        product_slug: 'pro',
        success_url: 'https://shop.example/thanks',
        cancel_url: 'https://shop.example/cancel',
      });
      const page = await fetch(`${platform.gatewayUrl}/checkout/${second.body.id}`, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({
          email: 'Already@example.com',
          card_number: '4242424242424242',
          exp: '12/34',
          cvc: '123',
        }),
      });
      expect(page.status).toBe(409);
      expect(await page.text()).toContain('Nothing was charged');
      expect((await get(`/checkout/sessions/${second.body.id}`)).body.status).toBe('OPEN');
    });

    it('refunds a payment that duplicates a live subscription, found only after payment, and starts nothing', async () => {
      // Two first payments of one buyer at once usually both pass the check before the charge
      // (billing has no subscription yet); billing then starts one and checkout refunds the other.
      const open = () =>
        send('POST', '/checkout/sessions', sk, {
          product_slug: 'pro',
          success_url: 'https://shop.example/thanks',
          cancel_url: 'https://shop.example/cancel',
        }).then((r) => r.body.id as string);
      const sessions = [await open(), await open()];
      const pages = await Promise.all(
        sessions.map((id) =>
          fetch(`${platform.gatewayUrl}/checkout/${id}`, {
            method: 'POST',
            redirect: 'manual',
            body: new URLSearchParams({
              email: 'twice@example.com',
              card_number: '4242424242424242',
              exp: '12/34',
              cvc: '123',
            }),
          }),
        ),
      );
      const paid = sessions.filter((_, i) => pages[i]!.status === 303);
      expect(pages.map((p) => p.status).sort()).toEqual(paid.length === 2 ? [303, 303] : [303, 409]);
      const customer = await customerByEmail('twice@example.com', paid.length);
      const [subscription] = await slow(async () => {
        const list = (await get(`/subscriptions?customer_id=${customer.id}`)).body.subscriptions;
        expect(list).toHaveLength(1);
        return list;
      });
      const duplicate = paid.find((id) => id !== subscription.checkout_session_id);
      if (!duplicate) return; // refused before the charge: nothing to refund
      const checkoutStore = platform.checkout!.service.context.store;
      const refunded = await slow(async () => {
        const events = await checkoutStore.readStream(`checkout_session-${duplicate}`);
        const refund = events.find((e) => e.type === 'OrderRefunded');
        expect(refund).toBeDefined();
        return refund!;
      });
      expect(refunded.data).toMatchObject({ reason: 'duplicate_subscription', object: { status: 'REFUNDED' } });
      expect((await get(`/checkout/sessions/${duplicate}`)).body).toMatchObject({
        status: 'COMPLETE',
        subscription_id: null,
      });
      // The buyer who comes back to the page is told why.
      const page = await fetch(`${platform.gatewayUrl}/checkout/${duplicate}`);
      expect(await page.text()).toContain('this payment was refunded in full');
    });
  });

  describe('invoices', () => {
    it('lists and reads one paid invoice per subscription checkout, numbered in order', async () => {
      await buy('pro', 'invoiced@example.com', { customer_email: 'invoiced@example.com' });
      await buy('team', 'invoiced@example.com', { customer_email: 'invoiced@example.com' });
      const customer = await customerByEmail('invoiced@example.com', 2);
      const invoices = await slow(async () => {
        const page = await get(`/invoices?customer_id=${customer.id}`);
        expect(page.body.data).toHaveLength(2);
        return page.body.data;
      });
      const [newest, oldest] = invoices;
      // The team plan starts with a 14-day free trial: its first invoice, the trial's, is 0.
      expect(newest).toMatchObject({
        object: 'invoice',
        status: 'paid',
        customer_id: customer.id,
        total: 0,
        amount_due: 0,
        lines: [expect.objectContaining({ description: 'Team (14-day free trial)' })],
      });
      expect(oldest).toMatchObject({ status: 'paid', total: 299, lines: [expect.objectContaining({ amount: 299 })] });
      const sequence = (invoice: { number: string }) => Number(invoice.number.replace('INV-', ''));
      expect(sequence(newest)).toBe(sequence(oldest) + 1);

      const first = await get(`/invoices?customer_id=${customer.id}&limit=1`);
      expect(first.body).toMatchObject({ has_more: true, data: [{ id: newest.id }] });
      const next = await get(`/invoices?customer_id=${customer.id}&limit=1&starting_after=${newest.id}`);
      expect(next.body).toMatchObject({ has_more: false, data: [{ id: oldest.id }] });
      expect((await get(`/invoices?customer_id=${customer.id}&status=open`)).body.data).toEqual([]);
      expect((await get(`/invoices?subscription_id=${oldest.subscription_id}`)).body.data).toEqual([oldest]);

      expect((await get(`/invoices/${oldest.id}`)).body).toEqual(oldest);
      expect((await get(`/invoices/${oldest.id}`, org.api_keys.production.secret_key)).status).toBe(404);
      expect((await get(`/invoices/${oldest.id}`, org.api_keys.sandbox.publishable_key)).status).toBe(401);
    });
  });

  describe('customer endpoints', () => {
    let ids: string[];
    beforeAll(async () => {
      for (const n of [1, 2, 3]) {
        await buy('sticker', `list${n}@example.com`, {
          customer_email: `list${n}@example.com`,
          external_customer_id: `list_${n}`,
        });
        await customerByEmail(`list${n}@example.com`);
      }
      const page = await get('/customers?limit=100');
      // Oldest first: ids[n - 1] is list<n>@example.com.
      ids = page.body.data
        .filter((c: { email: string }) => c.email.startsWith('list'))
        .reverse()
        .map((c: { id: string }) => c.id);
    });

    // Entitlements also take a Publishable Key, by customer_id or external_id only (cors.int.test.ts).
    it('take the Secret Key only', async () => {
      for (const path of ['/customers', `/customers/${ids[0]}`, '/customers/external/list_1', '/subscriptions']) {
        const res = await get(path, org.api_keys.sandbox.publishable_key);
        expect(res.status).toBe(401);
        expect(res.body.error.code).toBe('unauthorized');
      }
      expect((await patch(`/customers/${ids[0]}`, { name: 'x' }, org.api_keys.sandbox.publishable_key)).status).toBe(
        401,
      );
      expect((await fetch(`${platform.gatewayUrl}/v1/customers`)).status).toBe(401);
    });

    it('list newest first with limit, starting_after, has_more and next_cursor, and filter by email and status', async () => {
      expect(ids).toHaveLength(3);
      const first = await get('/customers?limit=1');
      expect(first.body).toMatchObject({ object: 'list', has_more: true, livemode: false });
      expect(first.body.data).toHaveLength(1);
      expect(first.body.next_cursor).toBe(first.body.data[0].id);
      const second = await get(`/customers?limit=1&starting_after=${first.body.next_cursor}`);
      expect(second.body.data[0].id).not.toBe(first.body.data[0].id);
      const all = await get('/customers?limit=100');
      expect(all.body).toMatchObject({ has_more: false, next_cursor: null });
      expect(all.body.data.slice(0, 2).map((c: { id: string }) => c.id)).toEqual([
        first.body.data[0].id,
        second.body.data[0].id,
      ]);
      const defaults = await get('/customers');
      expect(defaults.body.data.length).toBe(Math.min(10, all.body.data.length));
      expect((await get('/customers?email=LIST2@example.com')).body.data.map((c: { id: string }) => c.id)).toEqual([
        ids[1],
      ]);
      expect((await get('/customers?status=ACTIVE')).body.data.length).toBeGreaterThan(0);
      expect((await get('/customers?status=BANNED')).body.data).toEqual([]);
      expect(all.body.data[0]).toEqual(
        expect.objectContaining({ subscriptions_count: expect.any(Number), orders_count: expect.any(Number) }),
      );
    });

    it('answer 400 invalid_request for a bad limit, status or cursor', async () => {
      for (const query of ['limit=101', 'limit=0', 'limit=ten', 'status=active', 'starting_after=cus_nope']) {
        const res = await get(`/customers?${query}`);
        expect({ query, status: res.status, code: res.body.error?.code }).toEqual({
          query,
          status: 400,
          code: 'invalid_request',
        });
      }
    });

    it('read by id, by external id in both forms, and answer 404 resource_not_found otherwise', async () => {
      const byId = await get(`/customers/${ids[0]}`);
      expect(byId.status).toBe(200);
      expect(byId.body).toMatchObject({ id: ids[0], subscriptions: [] });
      const external = byId.body.external_id;
      expect((await get(`/customers/${external}?by_external_id=true`)).body).toEqual(byId.body);
      expect((await get(`/customers/external/${external}`)).body).toEqual(byId.body);
      for (const path of ['/customers/cus_missing', `/customers/${external}`, '/customers/external/missing']) {
        const res = await get(path);
        expect({ path, status: res.status, code: res.body.error.code }).toEqual({
          path,
          status: 404,
          code: 'resource_not_found',
        });
      }
      const production = await get(`/customers/${ids[0]}`, org.api_keys.production.secret_key);
      expect(production.status).toBe(404);
      const other = await client.createOrganization('Other');
      expect((await get(`/customers/${ids[0]}`, other.api_keys.sandbox.secret_key)).status).toBe(404);
    });

    it('update name, external id and metadata by id and by external id; null unlinks', async () => {
      const id = ids[2]!;
      const renamed = await patch(`/customers/${id}`, { name: 'Renamed', metadata: { crm: '42' } });
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ object: 'customer', id, name: 'Renamed', metadata: { crm: '42' } });
      const relinked = await patch('/customers/external/list_3', { external_id: 'list_3b' });
      expect(relinked.body).toMatchObject({ id, external_id: 'list_3b' });
      const viaQuery = await patch('/customers/list_3b?by_external_id=true', { name: 'Again' });
      expect(viaQuery.body).toMatchObject({ id, name: 'Again' });
      const unlinked = await patch(`/customers/${id}`, { external_id: null });
      expect(unlinked.body).toMatchObject({ id, external_id: null });
      expect((await get('/customers/external/list_3b')).status).toBe(404);
      expect((await get(`/customers/${id}`)).body).toMatchObject({ name: 'Again', external_id: null });
    });

    it('answer 409 conflict for an external id another customer of the environment holds', async () => {
      const res = await patch(`/customers/${ids[0]}`, { external_id: 'list_2' });
      expect(res.status).toBe(409);
      expect(res.body.error.code).toBe('conflict');
    });

    it('answer 422 validation_error for a name outside 1-255 or an external id with other characters', async () => {
      for (const body of [{ name: '' }, { name: 'n'.repeat(256) }, { external_id: 'a b' }, { external_id: 'a/b' }]) {
        const res = await patch(`/customers/${ids[0]}`, body);
        expect(res.status).toBe(422);
        expect(res.body.error).toMatchObject({
          code: 'validation_error',
          details: [expect.objectContaining({ path: Object.keys(body)[0] })],
        });
      }
      expect((await patch(`/customers/${ids[0]}`, { name: 'n'.repeat(255) })).status).toBe(200);
    });

    it('answer 400 invalid_request when email is sent or the JSON is malformed, and keep the email', async () => {
      const email = await patch(`/customers/${ids[0]}`, { email: 'new@example.com' });
      expect(email.status).toBe(400);
      expect(email.body.error.code).toBe('invalid_request');
      const byExternal = await patch('/customers/external/list_1', { email: 'new@example.com', name: 'x' });
      expect(byExternal.status).toBe(400);
      const malformed = await patch(`/customers/${ids[0]}`, '{"name": ');
      expect(malformed.status).toBe(400);
      expect(malformed.body.error.code).toBe('invalid_request');
      expect((await get(`/customers/${ids[0]}`)).body.email).toBe('list1@example.com');
      expect((await patch('/customers/cus_missing', { name: 'x' })).body.error.code).toBe('resource_not_found');
    });

    it('entitlements need an identifier; an unknown customer has none (more in entitlements.int.test.ts)', async () => {
      const res = await get('/customers/entitlements');
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
      const empty = { status: 200, body: { entitlements: [], customer: null, subscription: null, credits: null } };
      expect(await get('/customers/entitlements?customer_id=cus_missing')).toEqual(empty);
      expect(await get(`/customers/entitlements?email=list1@example.com&customer_id=${ids[0]}`)).toEqual({
        ...empty,
        body: {
          ...empty.body,
          customer: expect.objectContaining({ id: ids[0], email: 'list1@example.com' }),
          credits: { balance: 0 },
        },
      });
    });
  });

  describe('subscriptions', () => {
    it('list under `subscriptions` with has_more and starting_after, filter by customer, and read one', async () => {
      const all = await get('/subscriptions?limit=100');
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ object: 'list', has_more: false, livemode: false });
      expect(all.body.data).toEqual(all.body.subscriptions);
      const count = all.body.subscriptions.length;
      expect(count).toBeGreaterThanOrEqual(2);
      const first = await get('/subscriptions?limit=1');
      expect(first.body.has_more).toBe(true);
      expect(first.body.subscriptions).toEqual([all.body.subscriptions[0]]);
      const next = await get(`/subscriptions?limit=1&starting_after=${first.body.subscriptions[0].id}`);
      expect(next.body.subscriptions).toEqual([all.body.subscriptions[1]]);
      const customerId = all.body.subscriptions[0].customer_id;
      const mine = await get(`/subscriptions?customer_id=${customerId}`);
      expect(mine.body.subscriptions.every((s: { customer_id: string }) => s.customer_id === customerId)).toBe(true);
      expect(mine.body.subscriptions.length).toBeGreaterThan(0);
      expect((await get(`/subscriptions/${all.body.subscriptions[0].id}`)).body).toEqual(all.body.subscriptions[0]);
      expect((await get('/subscriptions/sub_missing')).status).toBe(404);
      expect((await get('/subscriptions', org.api_keys.production.secret_key)).body.subscriptions).toEqual([]);
    });
  });
});
