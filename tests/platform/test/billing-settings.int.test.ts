import { eventually } from '@billing/testing';
import { type Receiver, lifecycleOrganization, startLifecyclePlatform, startReceiver } from '../src/lifecycle-helpers';
import type { Platform } from '../src/platform';

jest.setTimeout(240000);

/**
 * Billing settings per organization and environment through the admin API
 * (docs/billing-settings.md), and dunning that follows them: its retry days, and what happens
 * after the last failure (cancel, or stay PAST_DUE with the invoice open), on a test clock with
 * a card that declines every later charge.
 */
describe('billing settings through the admin API', () => {
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

  const path = (org: string, environment = 'sandbox') =>
    `/organizations/${org}/billing_settings?environment=${environment}`;

  it('answers the defaults, changes in part per environment, and refuses bad input in the envelope', async () => {
    const { org, client } = await lifecycleOrganization(platform);
    const read = await client.admin('GET', path(org.id));
    expect(read).toMatchObject({
      status: 200,
      body: {
        object: 'billing_settings',
        organization_id: org.id,
        environment: 'sandbox',
        dunning: { retry_days: [3, 5, 7], after_final_failure: 'cancel' },
        proration: { upgrade: 'prorate_now', downgrade: 'at_period_end' },
        updated_at: null,
      },
    });

    const patched = await client.admin('PATCH', path(org.id), { dunning: { retry_days: [1, 4] } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      dunning: { retry_days: [1, 4], after_final_failure: 'cancel' },
      proration: { upgrade: 'prorate_now', downgrade: 'at_period_end' },
    });
    expect(patched.body.updated_at).toEqual(expect.any(String));
    const again = await client.admin('PATCH', path(org.id), { proration: { downgrade: 'now_with_credit' } });
    expect(again.body).toMatchObject({
      dunning: { retry_days: [1, 4] },
      proration: { upgrade: 'prorate_now', downgrade: 'now_with_credit' },
    });
    expect((await client.admin('GET', path(org.id))).body).toEqual(again.body);
    // Production is its own.
    expect((await client.admin('GET', path(org.id, 'production'))).body).toMatchObject({
      environment: 'production',
      dunning: { retry_days: [3, 5, 7] },
      updated_at: null,
    });

    const bad = await client.admin('PATCH', path(org.id), { dunning: { retry_days: [5, 3] } });
    expect(bad.status).toBe(422);
    expect(bad.body.error).toMatchObject({ code: 'validation_error' });
    expect(bad.body.error.details).toEqual([expect.objectContaining({ path: 'dunning.retry_days' })]);
    for (const body of [
      { dunning: { retry_days: [] } },
      { dunning: { retry_days: [61] } },
      { dunning: { retry_days: [1, 2, 3, 4, 5, 6, 7, 8, 9] } },
      { dunning: { after_final_failure: 'unpaid' } },
      { proration: { upgrade: 'sometimes' } },
      { colour: 'red' },
    ]) {
      expect([body, (await client.admin('PATCH', path(org.id), body)).status]).toEqual([body, 422]);
    }
    for (const query of ['', '?environment=staging']) {
      const answer = await client.admin('GET', `/organizations/${org.id}/billing_settings${query}`);
      expect([query, answer.status, answer.body.error.code]).toEqual([query, 400, 'bad_request']);
    }
    expect((await client.admin('GET', path(org.id))).body).toEqual(again.body);
    const unknown = await client.admin('GET', path('org_doesnotexist'));
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);
    expect((await client.admin('PATCH', path('org_doesnotexist'), {})).status).toBe(404);
    expect((await client.admin('GET', path(org.id), undefined, 'wrong-token')).status).toBe(401);
  });

  it('retries on the organization’s days and cancels after the last failure (subscription.canceled)', async () => {
    const { org, client, send, subscribeOnClock, advance } = await lifecycleOrganization(platform, receiver);
    expect((await client.admin('PATCH', path(org.id), { dunning: { retry_days: [1, 2] } })).status).toBe(200);
    const { clock, subscription } = await subscribeOnClock('cancel@example.com', '4000000000000341');

    await advance(clock, '2026-03-01T00:00:00Z');
    const [open] = (await send('GET', `/invoices?subscription_id=${subscription.id}&status=open`)).body.data;
    expect(open).toMatchObject({ attempt_count: 1, next_payment_attempt: '2026-03-01T10:00:00.000Z' });
    await advance(clock, '2026-03-01T12:00:00Z');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({
      status: 'open',
      attempt_count: 2,
      next_payment_attempt: '2026-03-02T10:00:00.000Z',
    });
    await advance(clock, '2026-03-03T00:00:00Z');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({
      status: 'uncollectible',
      attempt_count: 3,
      next_payment_attempt: null,
    });
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      status: 'CANCELED',
      canceled_at: '2026-03-02T10:00:00.000Z',
    });
    await eventually(() =>
      expect(
        receiver.events.filter((e) => e.type === 'subscription.canceled' && e.data.object.id === subscription.id),
      ).toHaveLength(1),
    );
    await eventually(() =>
      expect(
        receiver.events
          .filter((e) => e.type === 'invoice.marked_uncollectible' && e.data.object.id === open.id)
          .map((e) => [e.data.object.status, e.data.object.attempt_count]),
      ).toEqual([['uncollectible', 3]]),
    );
  });

  it('leaves the subscription PAST_DUE and its invoice open after the last failure, and tries no more', async () => {
    const { org, client, send, subscribeOnClock, advance } = await lifecycleOrganization(platform, receiver);
    const patched = await client.admin('PATCH', path(org.id), {
      dunning: { retry_days: [2], after_final_failure: 'past_due' },
    });
    expect(patched.body.dunning).toEqual({ retry_days: [2], after_final_failure: 'past_due' });
    const { clock, subscription } = await subscribeOnClock('stays@example.com', '4000000000000341');

    await advance(clock, '2026-03-01T00:00:00Z');
    const [open] = (await send('GET', `/invoices?subscription_id=${subscription.id}&status=open`)).body.data;
    expect(open).toMatchObject({ attempt_count: 1, next_payment_attempt: '2026-03-02T10:00:00.000Z' });
    await advance(clock, '2026-03-03T00:00:00Z');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({
      status: 'open',
      attempt_count: 2,
      amount_due: 299,
      next_payment_attempt: null,
    });
    await advance(clock, '2026-05-01T00:00:00Z');
    expect((await send('GET', `/invoices/${open.id}`)).body).toMatchObject({ status: 'open', attempt_count: 2 });
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body).toMatchObject({
      status: 'PAST_DUE',
      canceled_at: null,
    });
    await eventually(() =>
      expect(
        receiver.events.filter((e) => e.type === 'invoice.payment_failed' && e.data.object.id === open.id),
      ).toHaveLength(2),
    );
    expect(
      receiver.events.filter(
        (e) =>
          (e.type === 'subscription.canceled' && e.data.object.id === subscription.id) ||
          (e.type === 'invoice.marked_uncollectible' && e.data.object.id === open.id),
      ),
    ).toEqual([]);
  });
});
