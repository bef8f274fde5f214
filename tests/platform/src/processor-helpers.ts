import { createLogger } from '@billing/service';
import { eventually } from '@billing/testing';
import { type Platform, clientOf, jsonApi } from './platform';

/**
 * What the tests of real processors (ECPay, PAYUNi, through their emulators) share: an
 * organization's Sandbox pointed at an emulator, the form a page posts on to the processor, the
 * subscription a paid checkout created, and test clocks advanced until ready.
 */

type Send = ReturnType<typeof jsonApi>;

/** What the processor tests run the services with: no rate limit in the way, webhooks to loopback, a quick sweep. */
export const PROCESSOR_TEST_CONFIG = {
  RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000',
  WEBHOOK_ALLOW_PRIVATE_TARGETS: 'sandbox',
  CHECKOUT_SWEEP_INTERVAL_MS: '200',
};

/** A new organization on `platform`, with its Sandbox Secret Key client; its webhooks sent to `webhooksTo` when given. */
export async function organizationOn(platform: Platform, options: { webhooksTo?: string } = {}) {
  const client = clientOf(platform.gatewayUrl);
  const org = await client.createOrganization();
  const send = jsonApi(
    () => platform.gatewayUrl,
    () => org.api_keys.sandbox.secret_key,
  );
  if (options.webhooksTo) {
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: options.webhooksTo,
      events: ['*'],
    });
    expect(endpoint.status).toBe(201);
  }
  return { client, org, send };
}
type Admin = { admin: (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }> };

/** Keys in the shape PAYUNi issues (it publishes no test merchant). */
export const PAYUNI_TEST_MERCHANT = {
  merchantId: 'S01234567',
  hashKey: '12345678901234567890123456789012',
  hashIV: '1234567890123456',
};

/** Points the organization's Sandbox at a processor's emulator with these keys; answers the settings. */
export async function useProcessor(
  client: Admin,
  organizationId: string,
  processor: 'ecpay' | 'payuni',
  keys: { merchantId: string; hashKey: string; hashIV: string },
  emulatorUrl: string,
  extra: { methods?: string[] } = {},
) {
  const set = await client.admin('PUT', `/organizations/${organizationId}/payment_processor?environment=sandbox`, {
    processor,
    merchant_id: keys.merchantId,
    hash_key: keys.hashKey,
    hash_iv: keys.hashIV,
    endpoint_url: emulatorUrl,
    ...extra,
  });
  expect([set.status, set.body.processor]).toEqual([200, processor]);
  return set.body;
}

/** The hidden fields of a form a page posts on to a processor, as the browser would send them. */
export function hiddenFieldsOf(html: string): Record<string, string> {
  return Object.fromEntries(
    [...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)" \/>/g)].map((m) => [
      m[1]!,
      m[2]!.replaceAll('&amp;', '&'),
    ]),
  );
}

/** The subscription a completed checkout session created, once billing made it. */
export function subscriptionOf(send: Send, sessionId: string) {
  return eventually(async () => {
    const read = await send('GET', `/checkout/sessions/${sessionId}`);
    expect(read.body.subscription_id).toEqual(expect.any(String));
    const subscription = await send('GET', `/subscriptions/${read.body.subscription_id}`);
    expect(subscription.status).toBe(200);
    return subscription.body;
  });
}

/** How a renewal invoice says to pay it by transfer (an account or code, or the page to get one at ECPay). */
export type TransferInstructions = {
  type: string;
  bank_code: string | null;
  account: string | null;
  amount: number;
  expires_at: string;
  hosted_instructions_url?: string | null;
};

/**
 * A subscription's invoices as the API lists them (`invoicesOf`), and its open one once it says
 * how to pay NT$299 by ATM (`waitingInvoice`, after `attempts` attempts). `send` is read at each
 * call (a suite makes its client in beforeAll).
 */
export function transferInvoicesOf(sendOf: () => Send) {
  const invoicesOf = async (subscriptionId: string) =>
    (await sendOf()('GET', `/invoices?subscription_id=${subscriptionId}`)).body.data as Array<{
      id: string;
      status: string;
      attempt_count: number;
      payment_instructions?: TransferInstructions | null;
    }>;
  const waitingInvoice = (subscriptionId: string, attempts = 0) =>
    eventually(async () => {
      const open = (await invoicesOf(subscriptionId)).find((invoice) => invoice.status === 'open');
      expect(open?.attempt_count).toBe(attempts);
      expect(open?.payment_instructions).toMatchObject({ type: 'atm', amount: 299 });
      return open!;
    }, 30000);
  return { invoicesOf, waitingInvoice };
}

/** A test clock frozen at `frozen`, and a function that advances it and waits until it is ready. */
export async function testClockOf(send: Send, frozen: string) {
  const clock = (await send('POST', '/test_clocks', { frozen_time: frozen })).body.id as string;
  const advance = async (to: string) => {
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: to })).status).toBe(200);
    await eventually(async () => expect((await send('GET', `/test_clocks/${clock}`)).body.status).toBe('ready'), 60000);
  };
  return { clock, advance };
}

/** Every log line every service writes, at trace level: to show what never reaches a log. */
export function capturedLogs() {
  const lines: string[] = [];
  const logger = (name: string) =>
    createLogger(name, { level: 'trace', destination: { write: (line) => lines.push(line) } });
  return { lines, logger };
}

/**
 * The secrets and personal data a log line must never hold: each value given that appears in
 * some line, with the line's start (an empty list when none does).
 */
export function leaksIn(lines: string[], secrets: string[]): string[] {
  return secrets.flatMap((secret) =>
    lines.filter((line) => line.includes(secret)).map((line) => `${secret} in ${line.slice(0, 160)}`),
  );
}
