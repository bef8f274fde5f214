import { type PayuniEmulator, startPayuniEmulator } from '@billing/checkout';
import { eventually } from '@billing/testing';
import { type Receiver, startReceiver } from '../src/lifecycle-helpers';
import { DashboardAgent } from '../src/dashboard-helpers';
import {
  ADMIN_TOKEN,
  type CreatedOrganization,
  type Platform,
  clientOf,
  jsonApi,
  plan,
  startPlatform,
} from '../src/platform';
import {
  PAYUNI_TEST_MERCHANT,
  PROCESSOR_TEST_CONFIG,
  hiddenFieldsOf,
  organizationOn,
  subscriptionOf,
  transferInvoicesOf,
  testClockOf,
  useProcessor,
} from '../src/processor-helpers';

jest.setTimeout(180_000);

const DAY = 86_400_000;

/**
 * A subscription paid by transfer through PAYUNi (docs/payments.md): the first period by an ATM
 * account on the hosted page, then each renewal invoice waits for a transfer: PAYUNi issues an
 * account for it (server to server), the invoice shows it with its deadline
 * (`invoice.payment_action_required`), and the transfer pays it; an account left unpaid past its
 * deadline is a failed attempt for dunning, whose next attempt gets a new account.
 */
describe('PAYUNi: subscriptions paid by transfer, renewal invoices that wait with a deadline', () => {
  let platform: Platform;
  let emulator: PayuniEmulator;
  let receiver: Receiver;
  let org: CreatedOrganization;
  let send: ReturnType<typeof jsonApi>;
  /** The services' clock: real time, moved ahead past a code's deadline. */
  let ahead = 0;

  beforeAll(async () => {
    emulator = await startPayuniEmulator(PAYUNI_TEST_MERCHANT);
    receiver = await startReceiver();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      now: () => new Date(Date.now() + ahead),
      config: {
        ...PROCESSOR_TEST_CONFIG,
        BILLING_PENDING_CHARGE_MS: '1000',
        BILLING_TRIAL_SWEEP_INTERVAL_MS: '500',
        CHECKOUT_RECONCILE_INTERVAL_MS: '300',
      },
    });
    const shop = await organizationOn(platform, { webhooksTo: receiver.url });
    ({ org, send } = shop);
    expect((await shop.client.createProduct(org.id, plan({ slug: 'pro', price: 299 }))).status).toBe(201);
    expect((await shop.client.createProduct(org.id, plan({ slug: 'team', price: 599 }))).status).toBe(201);
    await useProcessor(shop.client, org.id, 'payuni', PAYUNI_TEST_MERCHANT, emulator.url);
  });
  afterAll(async () => {
    await platform?.stop();
    await emulator?.close();
    await receiver?.close();
  });

  /** A monthly plan on a test clock, its first period paid by an ATM account on the hosted page. */
  async function subscribeByTransfer(email: string) {
    const { clock, advance } = await testClockOf(send, '2026-01-31T10:00:00Z');
    const session = await send('POST', '/checkout/sessions', {
      product_slug: 'pro',
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: email,
      test_clock: clock,
    });
    expect(session.status).toBe(201);
    const sessionId = session.body.id as string;
    const offered = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}`).then((r) => r.text());
    expect(offered).toContain('value="atm"');
    const redirect = await fetch(`${platform.gatewayUrl}/checkout/${sessionId}`, {
      method: 'POST',
      body: new URLSearchParams({ method: 'atm' }),
    }).then((r) => r.text());
    const atPayuni = await fetch(`${emulator.url}/api/upp`, {
      method: 'POST',
      body: new URLSearchParams(hiddenFieldsOf(redirect)),
    });
    expect(atPayuni.status).toBe(200);
    const [tradeNo] = [...emulator.trades.entries()].find(([, t]) => t.fields.NotifyURL?.includes(sessionId))!;
    await emulator.pay(tradeNo);
    const subscription = await subscriptionOf(send, sessionId);
    expect(subscription).toMatchObject({ status: 'ACTIVE' });
    return { clock, advance, subscription };
  }

  const { invoicesOf, waitingInvoice } = transferInvoicesOf(() => send);
  /** The renewal codes PAYUNi issued (server to server), oldest first. */
  const renewalTrades = () =>
    [...emulator.trades.entries()].filter(([, t]) => t.fields.NotifyURL?.endsWith('/payuni/invoice-notify'));
  /** The organization's payments that do not match PAYUNi, once one names `invoiceId`. */
  const unmatchedOf = (invoiceId: string) =>
    eventually(async () => {
      const listed = await clientOf(platform.gatewayUrl).admin(
        'GET',
        `/organizations/${org.id}/unmatched_payments?environment=sandbox`,
      );
      const found = (listed.body.data as { invoice_id: string | null }[]).filter((p) => p.invoice_id === invoiceId);
      expect(found).not.toHaveLength(0);
      return found;
    }, 30000);
  const webhooks = (type: string, invoiceId: string) =>
    receiver.events.filter((event) => event.type === type && event.data.object.id === invoiceId);

  it('a renewal invoice shows the ATM account and its deadline, and the transfer pays it', async () => {
    const { clock, subscription } = await subscribeByTransfer('transfer@example.com');
    const codesBefore = renewalTrades().length;
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-03-01T00:00:00Z' })).status).toBe(
      200,
    );
    const invoice = await waitingInvoice(subscription.id);
    expect(invoice.payment_instructions!.account).toMatch(/^\d{14}$/);
    // The dashboard's payments page lists it as waiting, with the account.
    const awaiting = await clientOf(platform.gatewayUrl).admin(
      'GET',
      `/organizations/${org.id}/invoices?environment=SANDBOX&awaiting_transfer=true`,
    );
    expect(awaiting.body.data.map((i: { id: string }) => i.id)).toContain(invoice.id);
    const operator = new DashboardAgent(platform.gatewayUrl);
    await operator.signIn({ admin_token: ADMIN_TOKEN });
    const payments = (await operator.get(`/dashboard/${org.id}/sandbox/payments`)).html;
    expect(payments).toContain('Waiting for payment');
    expect(payments).toContain(`<code>${invoice.payment_instructions!.account}</code>`);
    await eventually(async () => expect(webhooks('invoice.payment_action_required', invoice.id)).toHaveLength(1));
    expect(webhooks('invoice.payment_action_required', invoice.id)[0]!.data.object.payment_instructions).toMatchObject({
      type: 'atm',
      account: invoice.payment_instructions!.account,
    });
    expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE');
    // The customer portal shows the customer how to pay it, in their language.
    const portal = await send('POST', '/portal/sessions', {
      customer_id: subscription.customer_id,
      return_url: 'https://shop.example/account',
      locale: 'zh-TW',
    });
    expect(portal.status).toBe(201);
    const portalPage = await fetch(portal.body.url).then((r) => r.text());
    expect(portalPage).toContain('請轉帳繳費');
    expect(portalPage).toContain(`<dd id="account">${invoice.payment_instructions!.account}</dd>`);
    expect(portalPage).toContain('NT$299');
    expect(portalPage).toContain('每期帳單以 ATM 轉帳（虛擬帳號）繳費');
    // The portal's card form is the simulator's: a customer of PAYUNi changes how they pay with the shop.
    expect(portalPage).not.toContain('id="update-card"');
    expect(portalPage).toContain('如需變更付款方式，請聯絡商家。');
    // One account for the invoice however often billing asks its key again.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(renewalTrades().length - codesBefore).toBe(1);

    const [tradeNo] = renewalTrades().at(-1)!;
    // Billing asks the key on every sweep; PAYUNi's trade query is asked at most every ten minutes.
    expect(emulator.queries.filter((q) => q === tradeNo).length).toBeLessThanOrEqual(1);
    // The transfer arrives: PAYUNi's post is checked and noted, and the next ask finds it paid.
    await emulator.pay(tradeNo);
    expect(emulator.posts.filter((p) => p.inside.MerTradeNo === tradeNo).map((p) => p.answer)).toEqual(['200 OK']);
    await eventually(async () => {
      const paid = (await invoicesOf(subscription.id)).filter((i) => i.status === 'paid');
      expect(paid).toHaveLength(2);
      expect(paid.find((i) => i.id === invoice.id)?.payment_instructions ?? null).toBeNull();
    }, 30000);
    await eventually(async () => expect(webhooks('invoice.paid', invoice.id)).toHaveLength(1));

    // Paid by transfer, the subscription cannot switch plans (the switch is charged at once).
    const team = ((await send('GET', '/products')).body.data as { id: string; slug: string }[]).find(
      (p) => p.slug === 'team',
    )!.id;
    const preview = await send('GET', `/subscriptions/${subscription.id}/switch-preview?target_product_id=${team}`);
    expect(preview.body).toMatchObject({ can_proceed: false, blocking_reason: 'pays_by_transfer' });

    // Reversed at PAYUNi afterwards (a bank's reversal): a few minutes after the invoice was paid,
    // the reconciliation asks PAYUNi about it once and lists it for the operator.
    emulator.trades.get(tradeNo)!.status = 'unpaid';
    try {
      ahead = 6 * 60_000;
      const [listed] = await unmatchedOf(invoice.id);
      expect(listed).toMatchObject({
        checkout_session_id: null,
        order_id: null,
        invoice_id: invoice.id,
        processor: 'payuni',
        trade_no: tradeNo,
        amount: 299,
        reason: 'not_paid_at_processor',
      });
      // The dashboard's overview lists it by its invoice, a link to the invoice's page.
      const overview = (await operator.get(`/dashboard/${org.id}/sandbox`)).html;
      expect(overview).toContain('Payments that do not match the processor');
      expect(overview).toContain(
        `<a href="/dashboard/${org.id}/sandbox/invoices/${invoice.id}"><code>${invoice.id}</code></a>`,
      );
      const asked = emulator.queries.filter((q) => q === tradeNo).length;
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(emulator.queries.filter((q) => q === tradeNo).length).toBe(asked);
    } finally {
      ahead = 0;
    }
  });

  it('an account left unpaid past its deadline is a failed attempt; dunning retries with a new account', async () => {
    const { clock, subscription } = await subscribeByTransfer('late@example.com');
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-03-01T00:00:00Z' })).status).toBe(
      200,
    );
    const first = await waitingInvoice(subscription.id);
    try {
      ahead = 4 * DAY; // the services' clock past the account's three days
      await eventually(
        async () => expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('PAST_DUE'),
        30000,
      );
      await eventually(async () => {
        const [failed] = webhooks('invoice.payment_failed', first.id);
        expect(failed).toBeDefined();
      });
    } finally {
      ahead = 0;
    }
    const afterFailure = (await invoicesOf(subscription.id)).find((i) => i.id === first.id)!;
    expect(afterFailure).toMatchObject({ status: 'open', attempt_count: 1 });
    expect(afterFailure.payment_instructions ?? null).toBeNull();

    // The buyer transfers to the given-up account anyway and PAYUNi takes it: no invoice waits
    // for it, so PAYUNi's post has it listed for the operator to give back or credit by hand.
    const [lateTrade] = renewalTrades().at(-1)!;
    await emulator.pay(lateTrade);
    const [late] = await unmatchedOf(first.id);
    expect(late).toMatchObject({ trade_no: lateTrade, amount: 299, reason: 'paid_after_deadline' });
    expect((await invoicesOf(subscription.id)).find((i) => i.id === first.id)).toMatchObject({ status: 'open' });

    // Dunning's next attempt (three days after the invoice opened) asks PAYUNi for a new account.
    expect((await send('POST', `/test_clocks/${clock}/advance`, { frozen_time: '2026-03-04T01:00:00Z' })).status).toBe(
      200,
    );
    const retried = await waitingInvoice(subscription.id, 1);
    expect(retried.id).toBe(first.id);
    expect(retried.payment_instructions!.account).not.toBe(first.payment_instructions!.account);
    const [tradeNo] = renewalTrades().at(-1)!;
    await emulator.pay(tradeNo);
    await eventually(
      async () => expect((await send('GET', `/subscriptions/${subscription.id}`)).body.status).toBe('ACTIVE'),
      30000,
    );
  });
});
