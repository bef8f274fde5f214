import { type EmailFacts, composeEmail } from './compose';
import { einvoiceOutcomeOf, emailRequestOf, reminderOf, settledRefOf } from './from-event';
import { handoverOfError } from './transport';

const merchant = { name: 'Acme 咖啡', logo_url: null, brand_color: '#aa3300', website_url: null };
const facts: EmailFacts = {
  amount: 1299,
  item: 'Pro <monthly>',
  period: { start: '2026-03-01T02:00:00.000Z', end: '2026-04-01T02:00:00.000Z' },
  invoice_number: 'INV-000042',
  einvoice_number: null,
  at: '2026-03-01T02:00:00.000Z',
  reason: null,
};
const buyer = (locale: 'zh-TW' | 'en') => ({ email: 'buyer@example.com', name: 'Buyer', locale });

describe('composeEmail', () => {
  it('given a payment, writes a receipt in zh-TW with the amount, period, invoice number and merchant', () => {
    const email = composeEmail('receipt', facts, buyer('zh-TW'), merchant);
    expect(email.subject).toBe('Acme 咖啡 付款收據');
    expect(email.text).toContain('付款金額: NT$1,299');
    expect(email.text).toContain('帳單編號: INV-000042');
    expect(email.text).toContain('2026年3月1日 – 2026年4月1日');
    expect(email.text).toContain('付款時間: 2026-03-01 10:00（GMT+8）');
    expect(email.html).toContain('<html lang="zh-TW">');
    expect(email.html).toContain('border-top:4px solid #aa3300');
  });

  it('given an English buyer, writes the receipt in English, and escapes what the merchant named', () => {
    const email = composeEmail('receipt', facts, buyer('en'), merchant);
    expect(email.subject).toBe('Your receipt from Acme 咖啡');
    expect(email.text).toContain('Amount paid: NT$1,299');
    expect(email.text).toContain('Item: Pro <monthly>');
    expect(email.html).toContain('Pro &lt;monthly&gt;');
    expect(email.html).not.toContain('Pro <monthly>');
  });

  it('given a failed payment and a portal link, tells the next attempt and links the card page until it expires', () => {
    const portal = { url: 'https://pay.example/portal/ps_1/tok', expires_at: '2026-03-08T02:00:00.000Z' };
    const email = composeEmail('payment_failed', facts, buyer('en'), merchant, portal);
    expect(email.subject).toBe('Your payment to Acme 咖啡 failed: please update your card');
    expect(email.text).toContain('We could not charge NT$1,299');
    expect(email.text).toContain('Update payment method: https://pay.example/portal/ps_1/tok');
    expect(email.html).toContain('href="https://pay.example/portal/ps_1/tok"');
  });

  it.each([
    ['trial_will_end', 'zh-TW', '試用將於 2026年3月1日 結束，屆時將收取 NT$1,299'],
    ['trial_will_end', 'en', 'ends on 1 Mar 2026; you will then be charged NT$1,299'],
    ['subscription_canceled', 'zh-TW', '您的「Pro <monthly>」訂閱已取消'],
    ['subscription_canceled', 'en', 'Your subscription to Pro <monthly> is canceled'],
    ['refund', 'zh-TW', '我們已退款 NT$1,299'],
    ['refund', 'en', 'We refunded NT$1,299'],
  ] as const)('given %s in %s, says so', (kind, locale, said) => {
    expect(composeEmail(kind, facts, buyer(locale), merchant).text).toContain(said);
  });

  it.each([
    ['zh-TW', '電子發票號碼'],
    ['en', 'E-invoice number'],
  ] as const)(
    'given an e-invoice, shows its number on the receipt in %s, in the text and the HTML',
    (locale, label) => {
      const email = composeEmail('receipt', { ...facts, einvoice_number: 'AB12345678' }, buyer(locale), merchant);
      expect(email.text).toContain(`${label}: AB12345678`);
      expect(email.html).toMatch(new RegExp(`${label}\\s*</td>\\s*<td[^>]*>AB12345678</td>`));
    },
  );

  it.each(['zh-TW', 'en'] as const)('given no e-invoice, names none on the receipt in %s', (locale) => {
    const email = composeEmail('receipt', facts, buyer(locale), merchant);
    expect(email.text).not.toMatch(/電子發票|E-invoice/);
    expect(email.html).not.toMatch(/電子發票|E-invoice/);
  });

  it('shows a logo only over https, and no colour but #rrggbb', () => {
    const shown = composeEmail('receipt', facts, buyer('en'), {
      ...merchant,
      logo_url: 'https://cdn.example/logo.png',
      brand_color: 'red;background:url(x)',
    });
    expect(shown.html).toMatch(/<img\s+src="https:\/\/cdn\.example\/logo\.png"/);
    expect(shown.html).toContain('#2563eb');
    expect(shown.html).not.toContain('url(x)');
    const plain = composeEmail('receipt', facts, buyer('en'), { ...merchant, logo_url: 'http://cdn.example/logo.png' });
    expect(plain.html).not.toContain('<img');
  });
});

const envelope = (type: string, data: Record<string, unknown>) =>
  ({ id: 'evt_1', type, organization: 'org_1', environment: 'SANDBOX', data }) as never;

describe('emailRequestOf', () => {
  it('given a one-time checkout, asks for a receipt to its buyer in the page language', () => {
    expect(
      emailRequestOf(
        envelope('checkout.completed', {
          mode: 'PAYMENT',
          amount_total: 480,
          customer_email: 'b@example.com',
          customer_id: null,
          locale: 'en',
          product: { name: 'Mug' },
          completed_at: '2026-03-01T00:00:00.000Z',
        }),
      ),
    ).toMatchObject({ kind: 'receipt', email: 'b@example.com', locale: 'en', facts: { amount: 480, item: 'Mug' } });
  });

  it('given a subscription checkout, asks nothing: its invoice.paid is the receipt', () => {
    expect(emailRequestOf(envelope('checkout.completed', { mode: 'SUBSCRIPTION', amount_total: 299 }))).toBeNull();
  });

  it('given a paid invoice of nothing (a free trial), asks nothing; of an amount, a receipt to its customer', () => {
    const invoice = { customer_id: 'cus_1', number: 'INV-1', amount_paid: 0, lines: [] };
    expect(emailRequestOf(envelope('invoice.paid', { object: invoice }))).toBeNull();
    expect(
      emailRequestOf(
        envelope('invoice.paid', {
          object: { ...invoice, amount_paid: 299, lines: [{ kind: 'subscription', description: 'Pro' }] },
        }),
      ),
    ).toMatchObject({
      kind: 'receipt',
      customer_id: 'cus_1',
      facts: { amount: 299, item: 'Pro', invoice_number: 'INV-1' },
    });
  });

  it('names a receipt by the invoice or order it was paid for, and whether it is a sale billing issues an e-invoice for', () => {
    const invoice = { id: 'in_1', customer_id: 'cus_1', amount_paid: 299, lines: [] };
    expect(emailRequestOf(envelope('invoice.paid', { object: invoice }))).toMatchObject({
      ref: 'in_1',
      einvoiced: true,
    });
    const purchase = {
      order_id: 'ord_1',
      mode: 'PAYMENT',
      amount_total: 480,
      customer_email: 'b@example.com',
      product: { name: 'Mug', type: 'ONE_TIME' },
    };
    expect(emailRequestOf(envelope('checkout.completed', purchase))).toMatchObject({ ref: 'ord_1', einvoiced: true });
    const gift = { ...purchase, product: { name: 'Tip', type: 'DONATION' } };
    expect(emailRequestOf(envelope('checkout.completed', gift))).toMatchObject({ ref: 'ord_1', einvoiced: false });
  });

  it('given a failed invoice, asks for a failed-payment email with the amount due and the next attempt', () => {
    expect(
      emailRequestOf(
        envelope('invoice.payment_failed', {
          object: {
            customer_id: 'cus_1',
            amount_paid: 0,
            amount_due: 299,
            next_payment_attempt: '2026-03-04T00:00:00Z',
          },
        }),
      ),
    ).toMatchObject({ kind: 'payment_failed', facts: { amount: 299, at: '2026-03-04T00:00:00Z' } });
  });

  it("given a refund of an invoice's charge, leaves it to invoice.refunded; of a one-time order, asks for it", () => {
    const refund = {
      status: 'succeeded',
      amount: 100,
      order_id: 'ord_1',
      invoice_id: null,
      reason: 'requested_by_customer',
    };
    expect(emailRequestOf(envelope('refund.updated', { object: refund }))).toMatchObject({
      kind: 'refund',
      facts: { amount: 100 },
    });
    expect(emailRequestOf(envelope('refund.updated', { object: { ...refund, invoice_id: 'in_1' } }))).toBeNull();
    expect(emailRequestOf(envelope('refund.updated', { object: { ...refund, status: 'pending' } }))).toBeNull();
  });
});

describe('handoverOfError', () => {
  it('reads a reply code as refused (5xx for good), a connection never made as refused, anything else as unknown', () => {
    expect(handoverOfError({ responseCode: 451, message: 'try later' })).toMatchObject({
      outcome: 'refused',
      permanent: false,
    });
    expect(handoverOfError({ responseCode: 550, message: 'no such user' })).toMatchObject({
      outcome: 'refused',
      permanent: true,
    });
    expect(handoverOfError({ code: 'ECONNECTION', message: 'refused' })).toMatchObject({ outcome: 'refused' });
    expect(handoverOfError({ code: 'ETIMEDOUT', command: 'DATA', message: 'timeout' })).toMatchObject({
      outcome: 'unknown',
    });
  });
});

describe('payment instructions and their reminder', () => {
  const atm = {
    ...facts,
    at: '2026-03-04T15:59:59.000Z',
    instructions: { type: 'atm' as const, bank_code: '812', account: '9103522175887271', payment_code: null },
  };
  const cvs = {
    ...facts,
    at: '2026-03-04T15:59:59.000Z',
    instructions: { type: 'cvs' as const, bank_code: null, account: null, payment_code: 'LLL22251222' },
  };

  it('given an ATM payment, tells the bank code, the account, the exact amount and the deadline in zh-TW', () => {
    const email = composeEmail('payment_instructions', atm, buyer('zh-TW'), merchant);
    expect(email.subject).toBe('Acme 咖啡 付款資訊');
    expect(email.text).toContain('銀行代碼: 812');
    expect(email.text).toContain('虛擬帳號: 9103522175887271');
    expect(email.text).toContain('應付金額: NT$1,299');
    expect(email.text).toContain('繳費期限: 2026-03-04 23:59（GMT+8）');
    expect(email.text).not.toContain('繳費代碼');
  });

  it('given a store code, tells the code and where to pay it, in English', () => {
    const email = composeEmail('payment_instructions', cvs, buyer('en'), merchant);
    expect(email.text).toContain('Payment code: LLL22251222');
    expect(email.text).toContain('7-ELEVEN, FamilyMart, Hi-Life or OK Mart');
    expect(email.text).not.toContain('Virtual account');
  });

  it('given an account ECPay has not issued yet, links the page that sends the buyer to ECPay, in both languages', () => {
    const url = 'https://pay.example/checkout/invoice-payments/abc';
    const pending = {
      ...atm,
      instructions: { ...atm.instructions, bank_code: null, account: null, hosted_instructions_url: url },
    };
    const zh = composeEmail('payment_instructions', pending, buyer('zh-TW'), merchant);
    expect(zh.text).toContain(`前往綠界取得 ATM 虛擬帳號: ${url}`);
    expect(zh.text).toContain('請按下方按鈕前往綠界');
    expect(zh.text).not.toContain('\n虛擬帳號:');
    expect(zh.html).toContain(`href="${url}"`);
    const en = composeEmail(
      'payment_reminder',
      { ...pending, instructions: { ...pending.instructions, type: 'cvs' } },
      buyer('en'),
      merchant,
    );
    expect(en.text).toContain(`Get a store payment code at ECPay: ${url}`);
    // Once issued, the account is written out and no button is needed.
    const issued = composeEmail(
      'payment_instructions',
      { ...atm, instructions: { ...atm.instructions, hosted_instructions_url: url } },
      buyer('en'),
      merchant,
    );
    expect(issued.text).not.toContain(url);
  });

  it('given a reminder, says the deadline in its subject', () => {
    expect(composeEmail('payment_reminder', cvs, buyer('en'), merchant).subject).toBe(
      'Reminder: pay Acme 咖啡 by 2026-03-04 23:59 (GMT+8)',
    );
  });
});

describe('reminders', () => {
  const pending = envelope('checkout.async_payment_pending', {
    session_id: 'cs_1',
    customer_email: 'atm@example.com',
    locale: null,
    instructions: {
      type: 'atm',
      bank_code: '812',
      account: '9103522175887271',
      payment_code: null,
      amount: 480,
      expires_at: '2026-03-04T15:59:59.000Z',
    },
    object: { id: 'cs_1', customer_email: null, customer_id: null },
  });

  it('given a deadline three days ahead, reminds a day before it; given one within a day, not at all', () => {
    const request = emailRequestOf(pending)!;
    expect(request).toMatchObject({ kind: 'payment_instructions', ref: 'cs_1', email: 'atm@example.com' });
    expect(reminderOf(request, new Date('2026-03-01T16:00:00.000Z'))).toMatchObject({
      kind: 'payment_reminder',
      due_at: '2026-03-03T15:59:59.000Z',
    });
    expect(reminderOf(request, new Date('2026-03-04T00:00:00.000Z'))).toBeNull();
  });

  it('given the checkout paid or expired, or the invoice paid or failed, names what to stop reminding of', () => {
    expect(settledRefOf(envelope('checkout.completed', { session_id: 'cs_1' }))).toBe('cs_1');
    expect(settledRefOf(envelope('checkout.expired', { session_id: 'cs_1' }))).toBe('cs_1');
    expect(settledRefOf(envelope('invoice.paid', { invoice_id: 'in_1', object: { id: 'in_1' } }))).toBe('in_1');
    expect(settledRefOf(envelope('refund.updated', {}))).toBeNull();
  });
});

describe('the yearly renewal notice', () => {
  it.each([
    ['zh-TW', '年度訂閱即將續約', '將於 2026年3月1日 自動續約，屆時將收取 NT$1,299'],
    ['en', 'renews soon', 'renews on 1 Mar 2026, and NT$1,299 will be charged then'],
  ] as const)('in %s, says when it renews and what it charges', (locale, subject, said) => {
    const email = composeEmail('renewal_upcoming', facts, buyer(locale), merchant);
    expect(email.subject).toContain(subject);
    expect(email.text).toContain(said);
  });
});

describe('einvoiceOutcomeOf', () => {
  const einvoice = { id: 'einv_1', invoice_id: null, order_id: 'ord_1', status: 'issued', number: 'AB12345678' };

  it('given an issued e-invoice, tells its number for the receipt of its invoice, else of its order', () => {
    expect(einvoiceOutcomeOf(envelope('einvoice.issued', { object: einvoice }))).toEqual({
      ref: 'ord_1',
      number: 'AB12345678',
    });
    const firstPeriod = { ...einvoice, invoice_id: 'in_1' };
    expect(einvoiceOutcomeOf(envelope('einvoice.issued', { object: firstPeriod }))).toMatchObject({ ref: 'in_1' });
  });

  it('given a failed attempt to issue, tells that none came; a failed void or allowance of an issued one, nothing', () => {
    const pending = { ...einvoice, status: 'pending', number: null };
    expect(einvoiceOutcomeOf(envelope('einvoice.failed', { object: pending }))).toEqual({ ref: 'ord_1', number: null });
    expect(einvoiceOutcomeOf(envelope('einvoice.failed', { object: einvoice }))).toBeNull();
    expect(einvoiceOutcomeOf(envelope('einvoice.voided', { object: einvoice }))).toBeNull();
    expect(einvoiceOutcomeOf(envelope('invoice.paid', { object: { id: 'in_1' } }))).toBeNull();
  });
});
