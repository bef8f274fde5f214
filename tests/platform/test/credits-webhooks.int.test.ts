import { WebhookEvent } from '@billing/contracts';
import { eventually } from '@billing/testing';
import { Webhook } from 'standardwebhooks';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import type { Platform } from '../src/platform';

jest.setTimeout(180000);

const CREDIT_EVENTS = [
  'credits.granted',
  'credits.spent',
  'credits.adjusted',
  'credits.expired',
  'credits.low_balance',
];

/**
 * Issue 34's webhooks (docs/credits.md, Events): a merchant's endpoint subscribed to the
 * credit events receives, signed, the grant and the spend with their ledger entries and the
 * balance, and `credits.low_balance` once the spend takes the balance below the threshold.
 */
describe('credits webhooks', () => {
  let platform: Platform;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    platform = await startLifecyclePlatform();
  });
  afterAll(async () => {
    await platform?.stop();
    await receiver?.close();
  });

  it('sends credits.granted, credits.spent and credits.low_balance, signed, with the entry and the balance', async () => {
    const { org, client, send, subscribe } = await lifecycleOrganization(platform);
    const endpoint = await client.admin('POST', `/organizations/${org.id}/webhook_endpoints`, {
      environment: 'SANDBOX',
      url: receiver.url,
      events: CREDIT_EVENTS,
    });
    expect(endpoint.status).toBe(201);
    const settings = await client.admin('PATCH', `/organizations/${org.id}/billing_settings?environment=sandbox`, {
      credits_low_balance_threshold: 50,
    });
    expect(settings.body.credits_low_balance_threshold).toBe(50);
    const { subscription } = await subscribe('credits@example.com', '4242424242424242');
    const customerId = subscription.customer_id;

    const credits = `/customers/${customerId}/credits`;
    expect((await send('POST', `${credits}/grants`, { amount: 100, reason: 'welcome' })).status).toBe(201);
    const spend = await send('POST', `${credits}/spend`, { amount: 60, idempotency_key: 'report-1' });
    expect([spend.status, spend.body.balance]).toEqual([200, 40]);

    const verified = await eventually(() => {
      expect(receiver.deliveries.map((d) => d.body.type).sort()).toEqual([
        'credits.granted',
        'credits.low_balance',
        'credits.spent',
      ]);
      return receiver.deliveries.map(({ headers, body }) =>
        new Webhook(endpoint.body.secret).verify(JSON.stringify(body), {
          'webhook-id': String(headers['webhook-id']),
          'webhook-timestamp': String(headers['webhook-timestamp']),
          'webhook-signature': String(headers['webhook-signature']),
        }),
      );
    }, 60000);
    const ledger = (await send('GET', `${credits}/ledger`)).body.data;
    const [spent, granted] = ledger;
    const byType = Object.fromEntries(
      verified.map((event) => [(event as WebhookEvent).type, WebhookEvent.parse(event)]),
    );
    expect(byType['credits.granted']!.data).toEqual({ object: granted, customer_id: customerId, balance: 100 });
    expect(byType['credits.spent']!.data).toEqual({ object: spent, customer_id: customerId, balance: 40 });
    expect(byType['credits.low_balance']!.data).toEqual({
      object: spent,
      customer_id: customerId,
      balance: 40,
      threshold: 50,
    });
    expect(spent).toMatchObject({ id: spend.body.id, type: 'spend', amount: -60, balance_after: 40 });
  });
});
