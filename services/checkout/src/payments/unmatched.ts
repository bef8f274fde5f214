import {
  BillingSettingsQuery,
  type Environment,
  type UnmatchedPayment,
  environmentOfSettings,
  livemodeOf,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { type EventStore, type RecordedEvent, type SqlExecutor, documentTable, keysetPage } from '@billing/eventstore';
import { sessionEvents } from '../sessions/session';

/**
 * Payments a processor and the platform disagree about: a checkout's (`CheckoutPaymentUnmatched`:
 * one that expired before the processor's post, a trade it no longer waited for, one the
 * processor does not show paid) or a renewal's (`recordUnmatchedRenewalPayment`). The operator
 * settles them by hand; this list is how they are found (docs/payments.md).
 */
export const unmatchedPaymentsTable = documentTable<UnmatchedPayment>({
  name: 'unmatched_payments',
  indexes: [
    'CREATE INDEX IF NOT EXISTS unmatched_payments_by_tenant ON {table} (organization, environment, created_at DESC, id DESC)',
  ],
});

export async function migrateUnmatchedPayments(store: EventStore): Promise<void> {
  await store.migrateSchema(
    `CREATE SCHEMA IF NOT EXISTS ${store.tables.schema};${unmatchedPaymentsTable.ddl(store.tables.schema)}`,
  );
}

/** Written in the session's append transaction; idempotent (the id is the session and trade). */
export async function projectUnmatchedPayments(sql: SqlExecutor, schema: string, events: RecordedEvent[]) {
  for (const recorded of events) {
    const event = sessionEvents.of(recorded);
    if (event?.type !== 'CheckoutPaymentUnmatched') continue;
    const { data } = event;
    await unmatchedPaymentsTable.write(
      sql,
      schema,
      {
        object: 'unmatched_payment',
        id: `${data.session_id}:${data.trade_no}`,
        checkout_session_id: data.session_id,
        order_id: data.order_id,
        invoice_id: null,
        processor: data.processor,
        trade_no: data.trade_no,
        amount: data.amount,
        reason: data.reason,
        created_at: data.detected_at,
        livemode: livemodeOf(recorded.environment),
      },
      recorded.stream_version,
      { tenant: { organization: recorded.organization, environment: recorded.environment } },
    );
  }
}

/**
 * A renewal the processor and the platform disagree about (renewal-charges.ts): not an event of
 * any stream (billing's invoice is not checkout's), written straight to the list, once per
 * invoice and trade. The invoice is the charge key's (`<invoice id>:<attempt>`).
 */
export async function recordUnmatchedRenewalPayment(
  store: EventStore,
  tenant: { organization: string; environment: Environment },
  payment: {
    chargeKey: string;
    processor: UnmatchedPayment['processor'];
    tradeNo: string;
    amount: number;
    reason: UnmatchedPayment['reason'];
    at: Date;
  },
): Promise<void> {
  const invoiceId = payment.chargeKey.slice(0, payment.chargeKey.lastIndexOf(':'));
  await unmatchedPaymentsTable.write(
    store.database,
    store.tables.schema,
    {
      object: 'unmatched_payment',
      id: `${invoiceId}:${payment.tradeNo}`,
      checkout_session_id: null,
      order_id: null,
      invoice_id: invoiceId,
      processor: payment.processor,
      trade_no: payment.tradeNo,
      amount: payment.amount,
      reason: payment.reason,
      created_at: payment.at.toISOString(),
      livemode: livemodeOf(tenant.environment),
    },
    1,
    { tenant },
  );
}

/** The tenant's unmatched payments, newest first (at most 100: each is a refund to make by hand). */
export async function listUnmatchedPayments(
  sql: SqlExecutor,
  schema: string,
  tenant: { organization: string; environment: string },
): Promise<UnmatchedPayment[]> {
  const { rows } = await keysetPage<{ document: UnmatchedPayment }>(sql, {
    from: unmatchedPaymentsTable.table(schema),
    select: 'document',
    where: { organization: tenant.organization, environment: tenant.environment },
    after: null,
    limit: 100,
  });
  // Listed before renewals could be: no invoice.
  return rows.map((r) => ({ ...r.document, invoice_id: r.document.invoice_id ?? null }));
}

/**
 * `GET /admin/unmatched_payments?environment=` (the admin API's
 * `/admin/v1/organizations/{org_id}/unmatched_payments`): the list, in the list envelope.
 */
export function mountUnmatchedPaymentsRoute(app: Express, context: ServiceContext): void {
  app.get('/admin/unmatched_payments', validate({ query: BillingSettingsQuery }), async (req, res) => {
    const environment = environmentOfSettings(res.locals.input.query.environment);
    const data = await listUnmatchedPayments(context.store.database, context.store.tables.schema, {
      organization: adminOrganizationOf(req),
      environment,
    });
    res.json({ object: 'list', data, has_more: false });
  });
}
