import { type IncomingHttpHeaders, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eventually } from '@billing/testing';
import {
  type CreatedOrganization,
  type Platform,
  type PlatformOptions,
  clientOf,
  jsonApi,
  plan,
  startPlatform,
} from './platform';

/**
 * What the subscription-lifecycle tests through the gateway share: a platform with checkout,
 * billing and notifications, an organization whose Sandbox webhooks go to a receiver on
 * loopback, and buying a plan on a test clock.
 */

export type WebhookEvent = { id: string; type: string; created_at?: string; data: { object: any } };

/** A webhook as it arrived: its headers (`webhook-id`, `webhook-signature`, ...) and its parsed body. */
export type WebhookDelivery = { headers: IncomingHttpHeaders; body: WebhookEvent };

/** The merchant's webhook endpoint on loopback: the events it received, and each delivery with its headers. */
export async function startReceiver() {
  const events: WebhookEvent[] = [];
  const deliveries: WebhookDelivery[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      events.push(body);
      deliveries.push({ headers: req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return { url, events, deliveries, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

export async function startLifecyclePlatform(
  options: Pick<PlatformOptions, 'logger' | 'config'> = {},
): Promise<Platform> {
  return startPlatform({
    checkout: true,
    billing: true,
    notifications: true,
    ...options,
    config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000', WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox', ...options.config },
  });
}

/** An organization with a monthly `pro` plan (299) and, when a receiver is given, a Sandbox webhook endpoint. */
export async function lifecycleOrganization(platform: Platform, receiver?: Receiver) {
  const client = clientOf(platform.gatewayUrl);
  const org: CreatedOrganization = await client.createOrganization();
  const sk = org.api_keys.sandbox.secret_key;
  await client.createProduct(org.id, plan({ slug: 'pro', price: 299 }));
  if (receiver) {
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
  }
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => sk,
  );
  return { org, sk, client, send, ...clockTools(platform, send) };
}

function clockTools(platform: Platform, send: ReturnType<typeof jsonApi>) {
  /** A test clock at `frozenTime` (31 January by default). */
  async function clockAt(frozenTime = '2026-01-31T10:00:00Z'): Promise<string> {
    const clock = await send('POST', '/test_clocks', { frozen_time: frozenTime });
    expect(clock.status).toBe(201);
    return clock.body.id;
  }

  /**
   * Pays a checkout session of `product_slug` (default `pro`) on the hosted page with `card`, from a
   * browser asking for `acceptLanguage` (none by default); the subscription.
   */
  async function subscribe(email: string, card: string, fields: Record<string, unknown> = {}, acceptLanguage?: string) {
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
      ...fields,
    });
    expect([session.status, session.body?.error]).toEqual([201, undefined]);
    const paid = await fetch(`${platform.gatewayUrl}/checkout/${session.body.id}`, {
      method: 'POST',
      redirect: 'manual',
      headers: acceptLanguage ? { 'accept-language': acceptLanguage } : {},
      body: new URLSearchParams({ card_number: card, exp: '12/34', cvc: '123' }),
    });
    expect(paid.status).toBe(303);
    const subscription = await eventually(async () => {
      const read = await send('GET', `/checkout/sessions/${session.body.id}`);
      const found = await send('GET', `/subscriptions/${read.body.subscription_id}`);
      expect(found.status).toBe(200);
      return found.body;
    });
    return { subscription, session: session.body };
  }

  /** A new clock at 31 January and `subscribe` on it. */
  async function subscribeOnClock(email: string, card: string, fields: Record<string, unknown> = {}) {
    const clock = await clockAt();
    return { clock, ...(await subscribe(email, card, { test_clock: clock, ...fields })) };
  }

  async function advance(clock: string, to: string) {
    const advanced = await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to });
    expect([advanced.status, advanced.body?.error]).toEqual([200, undefined]);
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'), 60000);
  }

  const invoicesOf = async (subscriptionId: string) =>
    (await send('GET', `/invoices?subscription_id=${subscriptionId}`)).body.data.reverse();

  return { clockAt, subscribe, subscribeOnClock, advance, invoicesOf };
}
