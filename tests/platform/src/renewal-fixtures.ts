import { randomBytes } from 'node:crypto';
import { CHECKOUT_TOPIC, type SoldProduct, newId } from '@billing/contracts';
import type { Bus } from '@billing/bus';
import type { SqlExecutor } from '@billing/eventstore';
import { envelope } from '@billing/testing';

/**
 * What the exactly-once renewal tests share: subscriptions made by publishing what checkout
 * publishes for a paid checkout (with a saved sandbox card, optionally on a test clock), and
 * the facts to count afterwards in billing's schema and in checkout's sandbox ledger.
 */

export const monthlyPlan = (): SoldProduct => ({
  id: newId('product'),
  name: 'Pro',
  slug: 'pro',
  type: 'SUBSCRIPTION',
  interval: 'month',
  interval_count: 1,
  price: 299,
  trial_days: null,
});

/** A card saved by the sandbox for 4242... (its reference says how later charges go: `ok`). */
export const savedSandboxCard = () => ({
  id: `pm_sandbox_ok_4242_122034_${randomBytes(8).toString('hex')}`,
  brand: 'visa',
  last4: '4242',
  exp_month: 12,
  exp_year: 2034,
});

/** `count` paid SUBSCRIPTION checkouts of `product` by different buyers, as checkout publishes them. */
export async function publishPaidCheckouts(
  bus: Bus,
  organization: string,
  product: SoldProduct,
  count: number,
  testClock: string | null = null,
): Promise<void> {
  const events = Array.from({ length: count }, (_, i) => {
    const session = newId('checkoutSession');
    return envelope('checkout.completed', `checkout_session-${session}`, organization, {
      session_id: session,
      order_id: newId('order'),
      organization,
      environment: 'SANDBOX',
      mode: 'SUBSCRIPTION',
      customer_id: null,
      customer_email: `buyer-${i}-${randomBytes(3).toString('hex')}@example.com`,
      customer_name: 'Buyer',
      external_customer_id: null,
      product_id: product.id,
      amount_subtotal: product.price,
      amount_total: product.price,
      discount_amount: 0,
      currency: 'TWD',
      promotion_code_id: null,
      redemption_id: null,
      metadata: null,
      completed_at: new Date().toISOString(),
      product,
      test_clock: testClock,
      payment_method: savedSandboxCard(),
    });
  });
  await bus.publish(
    CHECKOUT_TOPIC,
    events.map((event) => ({ key: event.stream, value: event })),
  );
}

/** Per subscription of the organization: its period end, renewal events and invoices. */
export async function renewalFacts(sql: SqlExecutor, billingSchema: string, organization: string) {
  const subscriptions = await sql.query<{ id: string; status: string; current_period_end: string }>(
    `SELECT id, status, document->>'current_period_end' AS current_period_end
     FROM ${billingSchema}.subscriptions WHERE organization = $1 ORDER BY id`,
    [organization],
  );
  const renewed = await sql.query<{ subscription_id: string; invoice_id: string; period_start: string }>(
    `SELECT data->>'subscription_id' AS subscription_id, data->>'invoice_id' AS invoice_id,
            data->'object'->>'current_period_start' AS period_start
     FROM ${billingSchema}.events WHERE type = 'SubscriptionRenewed' AND organization = $1`,
    [organization],
  );
  const invoices = await sql.query<{
    id: string;
    subscription_id: string;
    status: string;
    period_start: string;
    attempt_count: number;
    checkout_session_id: string | null;
  }>(
    `SELECT id, subscription_id, status, document->>'period_start' AS period_start,
            (document->>'attempt_count')::int AS attempt_count, document->>'checkout_session_id' AS checkout_session_id
     FROM ${billingSchema}.invoices WHERE organization = $1`,
    [organization],
  );
  const paidEvents = await sql.query<{ invoice_id: string; n: number }>(
    `SELECT data->>'invoice_id' AS invoice_id, count(*)::int AS n
     FROM ${billingSchema}.events WHERE type = 'InvoicePaid' AND organization = $1 GROUP BY 1`,
    [organization],
  );
  return {
    subscriptions: subscriptions.rows,
    renewed: renewed.rows,
    /** Renewal invoices only (the first period's is the checkout's). */
    renewalInvoices: invoices.rows.filter((invoice) => invoice.checkout_session_id === null),
    invoicePaidEvents: new Map(paidEvents.rows.map((row) => [row.invoice_id, row.n])),
  };
}

/** The sandbox's charges by invoice (keys `<invoice id>:<attempt>`), from checkout's ledger. */
export async function ledgerChargesByInvoice(sql: SqlExecutor, checkoutSchema: string, invoiceIds: string[]) {
  const { rows } = await sql.query<{ idempotency_key: string; status: string }>(
    `SELECT idempotency_key, result->>'status' AS status FROM ${checkoutSchema}.sandbox_charges
     WHERE split_part(idempotency_key, ':', 1) = ANY($1::text[])`,
    [invoiceIds],
  );
  const charges = new Map<string, Array<{ key: string; status: string }>>();
  for (const row of rows) {
    const invoiceId = row.idempotency_key.split(':')[0]!;
    charges.set(invoiceId, [...(charges.get(invoiceId) ?? []), { key: row.idempotency_key, status: row.status }]);
  }
  return charges;
}

/**
 * Each subscription renewed exactly once per period in `periods` (the starts of the renewed
 * periods): one SubscriptionRenewed, one renewal invoice, paid by one InvoicePaid on its first
 * attempt, and one charge in the ledger (attempt 1, succeeded); and the organization's invoice
 * numbers without a gap. Returns what it looked at.
 */
export async function expectRenewedOncePerPeriod(
  sql: SqlExecutor,
  schemas: { billing: string; checkout: string },
  organization: string,
  count: number,
  periods: string[],
  periodEnd: string,
) {
  const facts = await renewalFacts(sql, schemas.billing, organization);
  expect(facts.subscriptions).toHaveLength(count);
  expect(facts.subscriptions.map((s) => [s.status, s.current_period_end])).toEqual(
    facts.subscriptions.map(() => ['ACTIVE', periodEnd]),
  );
  const key = (subscription: string, start: string) => `${subscription}|${new Date(start).toISOString()}`;
  const expected = facts.subscriptions.flatMap((s) => periods.map((start) => key(s.id, start))).sort();
  expect(facts.renewed.map((r) => key(r.subscription_id, r.period_start)).sort()).toEqual(expected);
  expect(facts.renewalInvoices.map((i) => key(i.subscription_id, i.period_start)).sort()).toEqual(expected);
  for (const invoice of facts.renewalInvoices) {
    expect([invoice.id, invoice.status, invoice.attempt_count, facts.invoicePaidEvents.get(invoice.id)]).toEqual([
      invoice.id,
      'paid',
      1,
      1,
    ]);
  }
  const invoiceIds = facts.renewalInvoices.map((i) => i.id);
  expect(new Set(facts.renewed.map((r) => r.invoice_id))).toEqual(new Set(invoiceIds));
  const charges = await ledgerChargesByInvoice(sql, schemas.checkout, invoiceIds);
  for (const id of invoiceIds) {
    expect([id, charges.get(id)]).toEqual([id, [{ key: `${id}:1`, status: 'succeeded' }]]);
  }
  // The organization's invoice numbers run on without a gap: no renewal that lost a race kept one.
  const numbers = await sql.query<{ number: string }>(
    `SELECT document->>'number' AS number FROM ${schemas.billing}.invoices WHERE organization = $1 ORDER BY 1`,
    [organization],
  );
  expect(numbers.rows.map((row) => row.number)).toEqual(
    numbers.rows.map((_, i) => `INV-${String(i + 1).padStart(6, '0')}`),
  );
  return facts;
}
