import { randomUUID } from 'node:crypto';
import { type DomainEventEnvelope, WebhookEvent } from '@billing/contracts';
import { Webhook } from 'standardwebhooks';
import { signWebhook } from '../deliveries/sign';
import { toWebhookEvent } from './to-webhook-event';

const envelope = (type: string, data: Record<string, unknown>, occurred_at = '2026-11-21T08:00:00.000Z') =>
  ({
    id: randomUUID(),
    type,
    schema_version: 1,
    stream: 'x-1',
    stream_version: 1,
    global_position: 1,
    occurred_at,
    organization: 'org_1',
    environment: 'PRODUCTION',
    data,
  }) as DomainEventEnvelope;

const customer = {
  object: 'customer',
  id: 'cus_1',
  email: 'a@example.com',
  name: null,
  external_id: null,
  email_verified: false,
  status: 'ACTIVE',
  metadata: null,
  test_clock: null,
  created_at: '2026-11-21T07:00:00.000Z',
  updated_at: '2026-11-21T07:00:00.000Z',
  livemode: true,
};

const spendEntry = {
  object: 'credit_ledger_entry',
  id: 'cspd_1',
  type: 'spend',
  amount: -30,
  balance_after: 70,
  grant_id: null,
  drawn_from: [{ grant_id: 'cgr_1', amount: 30 }],
  reason: null,
  metadata: null,
  created_at: '2026-11-21T08:00:00.000Z',
  livemode: true,
};

describe('toWebhookEvent', () => {
  it('sends a credit change with its ledger entry, the customer and the balance, and nothing else of the event', () => {
    const spent = { customer_id: 'cus_1', spend_id: 'cspd_1', amount: 30, idempotency_key: 'k', balance_after: 70 };
    const event = toWebhookEvent(envelope('credits.spent', { ...spent, object: spendEntry, balance: 70 }))!;
    expect(event.data).toEqual({ object: spendEntry, customer_id: 'cus_1', balance: 70 });
    expect(WebhookEvent.parse(event)).toEqual(event);
    const low = toWebhookEvent(
      envelope('credits.low_balance', { customer_id: 'cus_1', balance: 70, threshold: 100, object: spendEntry }),
    )!;
    expect(low.data).toEqual({ object: spendEntry, customer_id: 'cus_1', balance: 70, threshold: 100 });
    expect(low.id).not.toBe(event.id);
  });

  it('sends nothing for a credit event recorded before credit events carried their entry', () => {
    expect(toWebhookEvent(envelope('credits.spent', { customer_id: 'cus_1', balance_after: 70 }))).toBeUndefined();
  });

  it('wraps the object of a public event in the webhook envelope', () => {
    const event = toWebhookEvent(envelope('customer.updated', { object: customer }))!;
    expect(event).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'customer.updated',
      created_at: '2026-11-21T08:00:00.000Z',
      livemode: true,
      data: { object: customer },
    });
    expect(WebhookEvent.parse(event)).toEqual(event);
  });

  it('gives the object its keys in the documented order, whatever order the event had', () => {
    const sortedByJsonb = Object.fromEntries(Object.entries(customer).sort(([a], [b]) => a.length - b.length));
    const event = toWebhookEvent(envelope('customer.updated', { object: sortedByJsonb }))!;
    expect(Object.keys(event.data.object)).toEqual(Object.keys(customer));
  });

  it('gives one change of one resource one id, whoever publishes it and when', () => {
    const a = toWebhookEvent(envelope('customer.updated', { object: customer }))!;
    const b = toWebhookEvent(envelope('customer.updated', { object: customer }, '2026-11-21T09:00:00.000Z'))!;
    const later = toWebhookEvent(
      envelope('customer.updated', { object: { ...customer, updated_at: '2026-11-21T09:00:00.000Z' } }),
    )!;
    const otherType = toWebhookEvent(envelope('customer.created', { object: customer }))!;
    expect(a.id).toBe(b.id);
    expect(new Set([a.id, later.id, otherType.id]).size).toBe(3);
  });

  it('falls back to when the event occurred for resources without updated_at', () => {
    const redemption = { id: 'red_1', status: 'ACTIVE' };
    const a = toWebhookEvent(envelope('promotion_code.redeemed', { object: redemption }))!;
    const b = toWebhookEvent(envelope('promotion_code.redeemed', { object: redemption }, '2026-11-21T09:00:00.000Z'))!;
    expect(a.id).not.toBe(b.id);
  });

  it('ignores internal events and public events without an object', () => {
    expect(toWebhookEvent(envelope('CustomerUpdated', { object: customer }))).toBeUndefined();
    expect(toWebhookEvent(envelope('customer.updated', { customer_id: 'cus_1' }))).toBeUndefined();
  });
});

describe('signWebhook', () => {
  it('signs as Standard Webhooks, so the reference library verifies it', () => {
    const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const body = JSON.stringify({ hello: 'world' });
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = signWebhook(secret, 'evt_1', timestamp, body);
    const library = new Webhook(secret);
    expect(headers['webhook-signature']).toBe(library.sign('evt_1', new Date(timestamp * 1000), body));
    expect(library.verify(body, { ...headers })).toEqual({ hello: 'world' });
  });
});
