import { randomBytes } from 'node:crypto';
import { CHECKOUT_TOPIC } from '@billing/contracts';
import { type Infrastructure, type ServiceUnderTest, startServiceForTest, testInfrastructure } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { notificationsService } from '../src';
import { claimDueEmails, emailTables, queueEmail } from '../src/emails/outbox';
import { EMAIL_LEASE_MS } from '../src/emails/sender';
import { type SmtpServer, envelope, newOrg, publish, smtpServer } from './helpers';

jest.setTimeout(60000);

/** The outbox: once per event and kind, retried when refused, never sent again after a crash. */
describe('the email outbox', () => {
  let infrastructure: Infrastructure;
  let running: ServiceUnderTest;
  let smtp: SmtpServer;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const schema = `notifications_${randomBytes(5).toString('hex')}`;
  const start = () =>
    startServiceForTest(notificationsService, {
      infrastructure,
      schema,
      now: () => new Date(clock),
      config: { SMTP_URL: smtp.url, SANDBOX_EMAILS: 'send', EMAIL_POLL_MS: '50' },
    });
  const oneTimePurchase = (organization: string, email: string) =>
    envelope('checkout.completed', organization, {
      order_id: `ord_${randomBytes(6).toString('hex')}`,
      mode: 'PAYMENT',
      amount_total: 480,
      customer_email: email,
      customer_id: null,
      product: { name: 'Mug' },
      completed_at: new Date(clock).toISOString(),
      object: { id: `cs_${randomBytes(6).toString('hex')}`, object: 'checkout.session' },
    });
  const rows = async () =>
    (
      await running.infrastructure.database.query<{
        to_address: string;
        status: string;
        attempts: number;
        error: string;
      }>(`SELECT to_address, status, attempts, error FROM ${emailTables(schema).emails} ORDER BY created_at`)
    ).rows;

  beforeAll(async () => {
    smtp = await smtpServer();
    infrastructure = await testInfrastructure('emails-test');
    running = await start();
  });
  afterAll(async () => {
    await running?.stop();
    await infrastructure?.close();
    await smtp?.close();
  });

  it('sends one email for an event delivered twice', async () => {
    const organization = newOrg();
    const event = oneTimePurchase(organization, 'twice@example.com');
    await publish(running, CHECKOUT_TOPIC, event, event);
    // The first event waits for the consumer group's first assignment.
    await eventually(() => expect(smtp.received.filter((m) => m.includes('twice@example.com'))).toHaveLength(1), 60000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received.filter((m) => m.includes('twice@example.com'))).toHaveLength(1);
  });

  it('tries again after a refusal for now (4xx), and gives up on a refusal for good (5xx)', async () => {
    smtp.answer({ code: 451, text: 'try later' });
    await publish(running, CHECKOUT_TOPIC, oneTimePurchase(newOrg(), 'later@example.com'));
    await eventually(async () =>
      expect((await rows()).find((r) => r.to_address === 'later@example.com')).toMatchObject({
        status: 'QUEUED',
        attempts: 1,
      }),
    );
    smtp.answer(null);
    clock += 60_000; // the first retry is due a minute later, on the service's clock
    await eventually(() => expect(smtp.received.filter((m) => m.includes('later@example.com'))).toHaveLength(1));
    // The server has it before the sender reads its answer and records it.
    await eventually(async () =>
      expect((await rows()).find((r) => r.to_address === 'later@example.com')).toMatchObject({
        status: 'SENT',
        attempts: 2,
      }),
    );

    smtp.answer({ code: 550, text: 'no such mailbox' });
    await publish(running, CHECKOUT_TOPIC, oneTimePurchase(newOrg(), 'nobody@example.com'));
    await eventually(async () =>
      expect((await rows()).find((r) => r.to_address === 'nobody@example.com')).toMatchObject({ status: 'FAILED' }),
    );
    smtp.answer(null);
  });

  const transferPending = (organization: string, email: string, sessionId: string, deadline: number) =>
    envelope('checkout.async_payment_pending', organization, {
      session_id: sessionId,
      customer_email: email,
      locale: 'en',
      instructions: {
        type: 'cvs',
        bank_code: null,
        account: null,
        payment_code: 'LLL22251222',
        amount: 480,
        expires_at: new Date(deadline).toISOString(),
      },
      object: { id: sessionId, object: 'checkout.session', customer_email: null, customer_id: null },
    });

  it('sends the store code at once and a reminder a day before the deadline, unless it was paid first', async () => {
    const organization = newOrg();
    const deadline = clock + 3 * 86_400_000;
    await publish(
      running,
      CHECKOUT_TOPIC,
      transferPending(organization, 'store@example.com', 'cs_store', deadline),
      transferPending(organization, 'paid@example.com', 'cs_paid', deadline),
    );
    const to = (address: string) => smtp.received.filter((m) => m.includes(address));
    await eventually(() => expect(to('store@example.com')).toHaveLength(1));
    expect(to('store@example.com')[0]).toContain('LLL22251222');
    await eventually(() => expect(to('paid@example.com')).toHaveLength(1));
    await publish(
      running,
      CHECKOUT_TOPIC,
      envelope('checkout.completed', organization, { session_id: 'cs_paid', mode: 'SUBSCRIPTION', amount_total: 480 }),
    );
    await eventually(async () =>
      expect((await rows()).filter((r) => r.to_address === 'paid@example.com' && r.status === 'SKIPPED')).toHaveLength(
        1,
      ),
    );

    clock = deadline - 86_400_000 + 1; // a day before the deadline
    await eventually(() => expect(to('store@example.com')).toHaveLength(2));
    expect(to('store@example.com')[1]).toMatch(/Subject: Reminder: pay/);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(to('paid@example.com')).toHaveLength(1);
  });

  it('never sends again an email whose sender stopped after claiming it', async () => {
    await running.service.shutdown(); // the schema stays (stop() drops it)
    // What a sender that died between claiming the email and recording SMTP's answer left.
    const sql = running.infrastructure.database;
    const request = {
      kind: 'receipt' as const,
      customer_id: null,
      order_id: null,
      email: 'crash@example.com',
      locale: null,
      facts: {
        amount: 480,
        item: 'Mug',
        period: null,
        invoice_number: null,
        einvoice_number: null,
        at: null,
        reason: null,
      },
    };
    const event = { id: `evt_${randomBytes(6).toString('hex')}`, organization: newOrg(), environment: 'SANDBOX' };
    await queueEmail(sql, schema, event, request, new Date(clock));
    const claimed = await claimDueEmails(sql, schema, new Date(clock), new Date(clock + EMAIL_LEASE_MS), 100);
    expect(claimed.map((e) => e.to_address)).toContain('crash@example.com');

    clock += EMAIL_LEASE_MS + 1; // past its lease
    running = await start();
    await eventually(async () =>
      expect((await rows()).find((r) => r.to_address === 'crash@example.com')).toMatchObject({ status: 'INTERRUPTED' }),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(smtp.received.filter((m) => m.includes('crash@example.com'))).toHaveLength(0);
  });
});

/** Without SMTP (the embedded default) and in Sandbox, every email is written and kept, not sent. */
describe('the mailbox without SMTP', () => {
  let running: ServiceUnderTest;
  beforeAll(async () => {
    running = await startServiceForTest(notificationsService, { config: { EMAIL_POLL_MS: '50' } });
  });
  afterAll(async () => running?.stop());

  it('keeps the email, written in full', async () => {
    const organization = newOrg();
    await publish(
      running,
      CHECKOUT_TOPIC,
      envelope('checkout.completed', organization, {
        order_id: 'ord_kept',
        mode: 'PAYMENT',
        amount_total: 480,
        customer_email: 'kept@example.com',
        customer_id: null,
        locale: 'en',
        product: { name: 'Mug' },
        completed_at: '2026-11-21T08:00:00.000Z',
        object: { id: 'cs_kept', object: 'checkout.session' },
      }),
    );
    const kept = await eventually(async () => {
      const { rows } = await running.infrastructure.database.query<{
        status: string;
        subject: string;
        text_body: string;
      }>(
        `SELECT e.status, e.subject, e.text_body FROM ${emailTables(running.service.context.store.tables.schema).emails} e
         WHERE e.to_address = 'kept@example.com'`,
      );
      expect(rows[0]?.status).toBe('KEPT');
      return rows[0]!;
    }, 60000);
    expect(kept.subject).toBe(`Your receipt from ${organization}`);
    expect(kept.text_body).toContain('Amount paid: NT$480');
  });
});
