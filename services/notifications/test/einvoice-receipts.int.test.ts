import { randomBytes } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { BILLING_TOPIC, CHECKOUT_TOPIC } from '@billing/contracts';
import { type ServiceUnderTest, startServiceForTest } from '@billing/runtime';
import { eventually } from '@billing/testing';
import { simpleParser } from 'mailparser';
import { notificationsService } from '../src';
import { emailTables } from '../src/emails/outbox';
import { type SmtpServer, client, envelope, newOrg, publish, smtpServer } from './helpers';

jest.setTimeout(90000);

/** Billing as the sender asks it for an invoice's customer: `<id>@example.com`. */
async function billingStub() {
  const server: Server = createServer((req, res) => {
    const id = decodeURIComponent(req.url?.split('/').pop() ?? '');
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'customer', id, email: `${id}@example.com`, name: 'Buyer' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const hex = () => randomBytes(6).toString('hex');

/**
 * A receipt waits for its e-invoice's number where the organization issues e-invoices: released
 * by `einvoice.issued` with the number (whichever comes first), or by `einvoice.failed`, or when
 * the wait (10 minutes, on the service's clock) passes; sent once, in every order of events.
 */
describe('receipts and their e-invoice', () => {
  let running: ServiceUnderTest;
  let smtp: SmtpServer;
  let billing: Awaited<ReturnType<typeof billingStub>>;
  let clock = Date.parse('2026-11-21T08:00:00.000Z');
  const api = client(() => running);
  const sql = () => running.infrastructure.database;
  const tables = () => emailTables(running.service.context.store.tables.schema);

  beforeAll(async () => {
    smtp = await smtpServer();
    billing = await billingStub();
    running = await startServiceForTest(notificationsService, {
      now: () => new Date(clock),
      config: { SMTP_URL: smtp.url, SANDBOX_EMAILS: 'send', EMAIL_POLL_MS: '50', BILLING_SERVICE_URL: billing.url },
    });
  });
  afterAll(async () => {
    await running?.stop();
    await smtp?.close();
    await billing?.close();
  });

  const mailsTo = (address: string) =>
    Promise.all(smtp.received.filter((raw) => raw.includes(address)).map((raw) => simpleParser(raw)));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 400));

  /** The receipt in the mailbox, through the admin API. */
  const receiptOf = async (organization: string) => {
    const { status, body } = await api.admin(organization, 'GET', '/emails?environment=SANDBOX');
    expect(status).toBe(200);
    return body.data.find((email: { kind: string }) => email.kind === 'receipt');
  };

  /** Billing's settings event, once the replica has it. */
  async function einvoicesIssuedBy(organization: string, enabled = true) {
    await publish(
      running,
      BILLING_TOPIC,
      envelope('EinvoiceSettingsConfigured', organization, {
        organization,
        environment: 'SANDBOX',
        sealed_credentials: enabled ? 'sealed' : null,
        object: {
          object: 'einvoice_settings',
          organization_id: organization,
          environment: 'sandbox',
          provider: enabled ? 'amego' : 'none',
          enabled,
          merchant_id: null,
          seller_tax_id: enabled ? '12345678' : null,
          tax_type: 'TAXED',
          donation_offered: true,
          endpoint_url: null,
          credentials_set: enabled,
          updated_at: new Date(clock).toISOString(),
        },
      }),
    );
    await eventually(async () => {
      const { rows } = await sql().query(`SELECT enabled FROM ${tables().einvoicing} WHERE organization = $1`, [
        organization,
      ]);
      expect(rows).toEqual([{ enabled }]);
    }, 60000);
  }

  const purchase = (
    organization: string,
    email: string,
    orderId: string,
    product = { name: 'Mug', type: 'ONE_TIME' },
  ) =>
    envelope('checkout.completed', organization, {
      order_id: orderId,
      mode: 'PAYMENT',
      amount_total: 480,
      customer_email: email,
      customer_id: null,
      locale: email.startsWith('en-') ? 'en' : null,
      product,
      completed_at: new Date(clock).toISOString(),
      object: { id: `cs_${hex()}`, object: 'checkout.session' },
    });

  const paidInvoice = (organization: string, invoiceId: string, customerId: string) =>
    envelope('invoice.paid', organization, {
      invoice_id: invoiceId,
      object: {
        id: invoiceId,
        object: 'invoice',
        customer_id: customerId,
        number: 'INV-000001',
        amount_paid: 299,
        paid_at: new Date(clock).toISOString(),
        lines: [{ kind: 'subscription', description: 'Pro' }],
      },
    });

  const einvoiceEvent = (
    type: 'einvoice.issued' | 'einvoice.failed',
    organization: string,
    paidFor: { order_id?: string; invoice_id?: string },
    number: string | null,
  ) => {
    const id = `einv_${hex()}`;
    return envelope(type, organization, {
      einvoice_id: id,
      organization,
      environment: 'SANDBOX',
      object: {
        object: 'einvoice',
        id,
        invoice_id: paidFor.invoice_id ?? null,
        order_id: paidFor.order_id ?? null,
        status: number ? 'issued' : 'pending',
        pending_action: number ? null : 'issue',
        number,
        random_code: number ? '7531' : null,
        total: 480,
      },
    });
  };

  it('holds the receipt until the e-invoice is issued, then sends it once with the number, in English', async () => {
    const organization = newOrg();
    await einvoicesIssuedBy(organization);
    const orderId = `ord_${hex()}`;
    await publish(running, CHECKOUT_TOPIC, purchase(organization, 'en-held@example.com', orderId));
    await eventually(async () => expect(await receiptOf(organization)).toMatchObject({ status: 'QUEUED' }));
    await settle();
    expect(await mailsTo('en-held@example.com')).toHaveLength(0);

    const issued = einvoiceEvent('einvoice.issued', organization, { order_id: orderId }, 'AB12345678');
    await publish(running, BILLING_TOPIC, issued, issued);
    const [mail] = await eventually(async () => {
      const mails = await mailsTo('en-held@example.com');
      expect(mails).toHaveLength(1);
      return mails;
    });
    expect(mail!.text).toContain('E-invoice number: AB12345678');
    expect(mail!.html).toContain('E-invoice number');
    expect(mail!.html).toContain('AB12345678');
    await eventually(async () => expect(await receiptOf(organization)).toMatchObject({ status: 'SENT' }));
    await settle();
    expect(await mailsTo('en-held@example.com')).toHaveLength(1);
  });

  it("fills the number of an e-invoice issued before the payment's event arrived, and sends at once, in zh-TW", async () => {
    const organization = newOrg();
    await einvoicesIssuedBy(organization);
    const orderId = `ord_${hex()}`;
    await publish(
      running,
      BILLING_TOPIC,
      einvoiceEvent('einvoice.issued', organization, { order_id: orderId }, 'CD00000001'),
    );
    await eventually(async () => {
      const { rows } = await sql().query(`SELECT number FROM ${tables().einvoices} WHERE ref = $1`, [orderId]);
      expect(rows).toEqual([{ number: 'CD00000001' }]);
    });
    await publish(running, CHECKOUT_TOPIC, purchase(organization, 'first@example.com', orderId));
    const [mail] = await eventually(async () => {
      const mails = await mailsTo('first@example.com');
      expect(mails).toHaveLength(1);
      return mails;
    });
    expect(mail!.text).toContain('電子發票號碼: CD00000001');
    expect(mail!.html).toContain('電子發票號碼');
  });

  it("releases a subscription's receipt with the e-invoice of its invoice, which names the checkout order too", async () => {
    const organization = newOrg();
    await einvoicesIssuedBy(organization);
    const invoiceId = `in_${hex()}`;
    const customerId = `cus_${hex()}`;
    await publish(running, BILLING_TOPIC, paidInvoice(organization, invoiceId, customerId));
    await eventually(async () => expect(await receiptOf(organization)).toMatchObject({ status: 'QUEUED' }));
    await publish(
      running,
      BILLING_TOPIC,
      einvoiceEvent('einvoice.issued', organization, { invoice_id: invoiceId, order_id: `ord_${hex()}` }, 'EF00000002'),
    );
    const [mail] = await eventually(async () => {
      const mails = await mailsTo(`${customerId}@example.com`);
      expect(mails).toHaveLength(1);
      return mails;
    });
    expect(mail!.text).toContain('電子發票號碼: EF00000002');
    expect(mail!.text).toContain('帳單編號: INV-000001');
  });

  it('sends the receipt without a number at once when issuing fails, and not again when it is issued later', async () => {
    const organization = newOrg();
    await einvoicesIssuedBy(organization);
    const orderId = `ord_${hex()}`;
    await publish(running, CHECKOUT_TOPIC, purchase(organization, 'failed@example.com', orderId));
    await eventually(async () => expect(await receiptOf(organization)).toMatchObject({ status: 'QUEUED' }));
    await publish(running, BILLING_TOPIC, einvoiceEvent('einvoice.failed', organization, { order_id: orderId }, null));
    const [mail] = await eventually(async () => {
      const mails = await mailsTo('failed@example.com');
      expect(mails).toHaveLength(1);
      return mails;
    });
    expect(mail!.text).not.toContain('電子發票');
    await eventually(async () => expect(await receiptOf(organization)).toMatchObject({ status: 'SENT' }));
    await publish(
      running,
      BILLING_TOPIC,
      einvoiceEvent('einvoice.issued', organization, { order_id: orderId }, 'GH00000003'),
    );
    await settle();
    expect(await mailsTo('failed@example.com')).toHaveLength(1);
  });

  it('sends at once where no e-invoice is issued: an organization without them, or a donation', async () => {
    const without = newOrg();
    await einvoicesIssuedBy(without, false);
    await publish(running, CHECKOUT_TOPIC, purchase(without, 'none@example.com', `ord_${hex()}`));
    const issuing = newOrg();
    await einvoicesIssuedBy(issuing);
    const donation = { name: 'Tip jar', type: 'DONATION' };
    await publish(running, CHECKOUT_TOPIC, purchase(issuing, 'gift@example.com', `ord_${hex()}`, donation));
    await eventually(async () => {
      expect(await mailsTo('none@example.com')).toHaveLength(1);
      expect(await mailsTo('gift@example.com')).toHaveLength(1);
    });
    const [mail] = await mailsTo('none@example.com');
    expect(mail!.text).not.toContain('電子發票');
  });

  it('sends the receipt without a number once the wait passes, and not again when the e-invoice comes late', async () => {
    const organization = newOrg();
    await einvoicesIssuedBy(organization);
    const orderId = `ord_${hex()}`;
    await publish(running, CHECKOUT_TOPIC, purchase(organization, 'en-late@example.com', orderId));
    await eventually(async () => expect(await receiptOf(organization)).toMatchObject({ status: 'QUEUED' }));
    clock += 10 * 60_000 - 1_000;
    await settle();
    expect(await mailsTo('en-late@example.com')).toHaveLength(0);

    clock += 1_000; // the wait, 10 minutes on the service's clock, has passed
    const [mail] = await eventually(async () => {
      const mails = await mailsTo('en-late@example.com');
      expect(mails).toHaveLength(1);
      return mails;
    });
    expect(mail!.text).not.toContain('E-invoice');
    await eventually(async () => expect(await receiptOf(organization)).toMatchObject({ status: 'SENT' }));
    await publish(
      running,
      BILLING_TOPIC,
      einvoiceEvent('einvoice.issued', organization, { order_id: orderId }, 'JK00000004'),
    );
    await settle();
    expect(await mailsTo('en-late@example.com')).toHaveLength(1);
  });
});
