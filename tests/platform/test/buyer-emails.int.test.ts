import { callService, caller, eventually } from '@billing/testing';
import { createUser, signedIn } from '../src/dashboard-helpers';
import { lifecycleOrganization } from '../src/lifecycle-helpers';
import { type Platform, plan, startPlatform } from '../src/platform';
import { type SmtpServer, messagesTo, startSmtpServer } from '../src/smtp';

jest.setTimeout(240000);

/**
 * Buyers' emails through the whole platform, delivered over SMTP (`SANDBOX_EMAILS=send`): a
 * receipt for the first payment and each renewal, a failed renewal, a trial about to end, each in
 * the language the buyer's checkout was in, once per event; and the mailbox that shows them.
 */
describe('emails to buyers', () => {
  let smtp: SmtpServer;
  let platform: Platform;
  let lifecycle: Awaited<ReturnType<typeof lifecycleOrganization>>;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      config: {
        RATE_LIMIT_PER_MINUTE_OVERRIDE: '100000',
        SMTP_URL: smtp.url,
        SANDBOX_EMAILS: 'send',
        EMAIL_POLL_MS: '200',
        EMAIL_FROM_ADDRESS: 'billing@shop.example',
      },
    });
    lifecycle = await lifecycleOrganization(platform);
    await lifecycle.client.createProduct(lifecycle.org.id, plan({ slug: 'trial', price: 500, trial_days: 14 }));
    await lifecycle.client.createProduct(lifecycle.org.id, plan({ slug: 'yearly', price: 2990, interval: 'year' }));
  });
  afterAll(async () => {
    await platform?.stop();
    await smtp?.close();
  });

  const mailTo = (address: string) => messagesTo(smtp, address);
  const admin = (path: string) => lifecycle.client.admin('GET', `/organizations/${lifecycle.org.id}${path}`);

  it('sends a receipt for the first payment and for a renewal, in zh-TW by default', async () => {
    const { clock } = await lifecycle.subscribeOnClock('renews@example.com', '4242424242424242');
    const [first] = await eventually(() => {
      expect(mailTo('renews@example.com')).toHaveLength(1);
      return mailTo('renews@example.com');
    });
    expect(first!.subject).toMatch(/付款收據$/);
    expect(first!.from?.value[0]).toMatchObject({ address: 'billing@shop.example' });
    expect(first!.text).toContain('付款金額: NT$299');
    expect(first!.html).toContain('NT$299');

    await lifecycle.advance(clock, '2026-03-01T00:00:00Z');
    const receipts = await eventually(() => {
      expect(mailTo('renews@example.com')).toHaveLength(2);
      return mailTo('renews@example.com');
    }, 60000);
    expect(receipts[1]!.text).toContain('付款金額: NT$299');
    expect(receipts[1]!.text).toContain('INV-');
    expect(receipts.map((m) => m.messageId)).toHaveLength(new Set(receipts.map((m) => m.messageId)).size);
  });

  it.each([
    {
      locale: 'zh-TW',
      email: 'declines-zh@example.com',
      receipt: /付款收據$/,
      failed: /扣款失敗/,
      charged: '我們無法向您的卡片收取',
      link: /更新付款方式: (\S+)/,
      until: /此連結於 (\d{4}-\d\d-\d\d)/,
      paid: '付款金額: NT$299',
    },
    {
      locale: 'en',
      email: 'declines@example.com',
      receipt: /^Your receipt from /,
      failed: /failed/,
      charged: 'We could not charge NT$299',
      link: /Update payment method: (\S+)/,
      until: /This link works until (\d{4}-\d\d-\d\d)/,
      paid: 'Amount paid: NT$299',
    },
  ] as const)(
    'writes in $locale to a buyer whose checkout was in it, and tells them when a renewal fails',
    async (words) => {
      const { clock } = await lifecycle.subscribeOnClock(words.email, '4000000000000341', { locale: words.locale });
      await eventually(() => expect(mailTo(words.email)).toHaveLength(1));
      expect(mailTo(words.email)[0]!.subject).toMatch(words.receipt);

      await lifecycle.advance(clock, '2026-03-01T00:00:00Z');
      const failed = await eventually(() => {
        const found = mailTo(words.email).filter((m) => words.failed.test(m.subject ?? ''));
        expect(found).toHaveLength(1);
        return found[0]!;
      }, 60000);
      expect(failed.text).toContain(words.charged);

      // The email's link opens the portal on the card page, for a week; a good card pays the open invoice.
      const link = words.link.exec(failed.text ?? '')![1]!;
      expect(link).toMatch(/\/portal\/portal_session_\w+\/\S+\/payment_method$/);
      // A week on the real clock: the link is read in real time, whatever the subscription's clock says.
      // The email names the Taipei day the week ends on: that day begins 6 to 7 days after the link
      // was made (read as UTC midnight it was 7.3 days away whenever Taipei had passed midnight).
      const until = words.until.exec(failed.text ?? '')![1]!;
      const days = (Date.parse(`${until}T00:00:00+08:00`) - Date.now()) / 86_400_000;
      expect(days).toBeGreaterThan(5.9);
      expect(days).toBeLessThanOrEqual(7);
      expect(failed.html).toContain(`href="${link}"`);
      const form = await fetch(link);
      const formHtml = await form.text();
      expect(form.status).toBe(200);
      const csrf = /name="csrf_token" value="([^"]+)"/.exec(formHtml)![1]!;
      const fixed = await fetch(link, {
        method: 'POST',
        redirect: 'manual',
        body: new URLSearchParams({ card_number: '4242424242424242', exp: '12/34', cvc: '123', csrf_token: csrf }),
      });
      expect([fixed.status, fixed.headers.get('location')]).toEqual([303, expect.stringMatching(/notice=card_paid$/)]);
      const receipts = await eventually(() => {
        const found = mailTo(words.email).filter((m) => words.receipt.test(m.subject ?? ''));
        expect(found).toHaveLength(2);
        return found;
      });
      expect(receipts[1]!.text).toContain(words.paid);
    },
  );

  it("writes in the buyer's browser language when the merchant chose none for the page", async () => {
    await lifecycle.subscribe('browser-en@example.com', '4242424242424242', {}, 'en-US,en;q=0.9');
    const [receipt] = await eventually(() => {
      expect(mailTo('browser-en@example.com')).toHaveLength(1);
      return mailTo('browser-en@example.com');
    });
    expect(receipt!.subject).toMatch(/receipt/i);
    expect(receipt!.text).toContain('NT$299');
  });

  it("refuses a bad ask for an email's portal link with a 4xx, never a 5xx", async () => {
    const ask = (body: unknown) =>
      callService(
        platform.billing!.service.url,
        'POST',
        '/internal/portal/sessions/for-email',
        caller(lifecycle.org.id),
        body,
      );
    for (const body of [
      {},
      { customer_id: 42 },
      { customer_id: 'cus_\u0000' },
      { customer_id: 'cus_1', extra: true },
      [],
    ]) {
      const answer = await ask(body);
      expect([answer.status, answer.body.error?.code]).toEqual([expect.any(Number), expect.any(String)]);
      expect(answer.status).toBeGreaterThanOrEqual(400);
      expect(answer.status).toBeLessThan(500);
    }
    expect((await ask({ customer_id: 'cus_nobody' })).status).toBe(404);
  });

  it('tells a buyer three days before the trial ends', async () => {
    const { clock } = await lifecycle.subscribeOnClock('trial@example.com', '4242424242424242', {
      product_slug: 'trial',
    });
    await lifecycle.advance(clock, '2026-02-12T00:00:00Z');
    const told = await eventually(() => {
      const found = mailTo('trial@example.com');
      expect(found).toHaveLength(1);
      return found[0]!;
    }, 60000);
    expect(told.subject).toMatch(/試用即將結束$/);
    expect(told.text).toContain('NT$500');
  });

  it('tells a buyer seven days before a yearly subscription renews', async () => {
    const { clock } = await lifecycle.subscribeOnClock('yearly@example.com', '4242424242424242', {
      product_slug: 'yearly',
    });
    await eventually(() => expect(mailTo('yearly@example.com')).toHaveLength(1)); // the receipt
    await lifecycle.advance(clock, '2027-01-24T09:00:00Z');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(mailTo('yearly@example.com')).toHaveLength(1);
    await lifecycle.advance(clock, '2027-01-25T00:00:00Z');
    const notice = await eventually(() => {
      const found = mailTo('yearly@example.com').filter((m) => /即將續約$/.test(m.subject ?? ''));
      expect(found).toHaveLength(1);
      return found[0]!;
    }, 60000);
    expect(notice.text).toContain('將於 2027年1月31日 自動續約，屆時將收取 NT$2,990');
  });

  it('shows every email in the mailbox, sent once, and lets the merchant switch a kind off', async () => {
    // The SMTP server has an email before its sender records the answer: wait for the records.
    const sent = await eventually(async () => {
      const mailbox = await admin('/emails?environment=SANDBOX&limit=100');
      expect(mailbox.status).toBe(200);
      const found = mailbox.body.data.filter((e: { status: string }) => e.status === 'SENT');
      expect(found.length).toBe(smtp.received.length);
      return found;
    });
    expect(new Set(sent.map((e: { event_id: string; kind: string }) => `${e.event_id} ${e.kind}`)).size).toBe(
      sent.length,
    );
    const one = await admin(`/emails/${sent[0].id}`);
    expect(one.body).toMatchObject({ object: 'email', status: 'SENT', livemode: false });
    expect(one.body.html).toContain('<html lang=');

    const off = await lifecycle.client.admin('PATCH', `/organizations/${lifecycle.org.id}/email_settings`, {
      environment: 'SANDBOX',
      receipt: false,
    });
    expect(off.body).toMatchObject({ object: 'email_settings', receipt: false, payment_failed: true });
    const before = smtp.received.length;
    await lifecycle.subscribe('quiet@example.com', '4242424242424242');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(mailTo('quiet@example.com')).toHaveLength(0);
    expect(smtp.received.length).toBe(before);

    const bad = await lifecycle.client.admin('PATCH', `/organizations/${lifecycle.org.id}/email_settings`, {
      environment: 'SANDBOX',
      receipt: 'no',
    });
    expect([bad.status, bad.body.error?.code]).toEqual([422, 'validation_error']);
    const kept = await admin('/email_settings?environment=SANDBOX');
    expect(kept.body).toMatchObject({ receipt: false, payment_failed: true });
  });

  it('shows the mailbox in the dashboard: each email, its text, its HTML on its own, and the switches', async () => {
    await createUser(platform.gatewayUrl, lifecycle.org.id, 'owner@shop.example', 'owner', 'correct horse battery');
    const agent = await signedIn(platform.gatewayUrl, 'owner@shop.example', 'correct horse battery');
    const base = `/dashboard/${lifecycle.org.id}/sandbox`;
    const mailbox = await agent.get(`${base}/emails`);
    expect(mailbox.status).toBe(200);
    expect(mailbox.html).toContain('renews@example.com');
    expect(mailbox.html).toContain('Your receipt from');
    const first = /href="([^"]+\/emails\/eml_\w+)"/.exec(mailbox.html)![1]!;
    const page = await agent.get(first);
    expect(page.status).toBe(200);
    expect(page.html).toContain('Plain text');
    const raw = await fetch(`${platform.gatewayUrl}${first}/html`, {
      headers: { cookie: '' },
      redirect: 'manual',
    });
    expect(raw.status).not.toBe(200); // not without the session
    const shown = await agent.get(`${first}/html`);
    expect(shown.status).toBe(200);
    expect(shown.html).toContain('<html lang=');

    const saved = await agent.submit(`${base}/emails`, { _action: 'settings', payment_failed: 'on' });
    expect(saved.status).toBe(303);
    const settings = await admin('/email_settings?environment=SANDBOX');
    expect(settings.body).toMatchObject({ receipt: false, payment_failed: true, trial_will_end: false, refund: false });
  });
});
