import { AdminPendingChargesQuery, type PendingCharge, type SubscriptionSwitchStartedData } from '@billing/contracts';
import type { SqlExecutor } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { type Tenant, adminOrganizationOf, validate } from '@billing/service';
import type { Express } from 'express';
import { invoiceChargeKey } from '../invoices/payment';
import { subscriptionsTable } from '../subscriptions/read-model';
import { switchesTable } from '../subscriptions/switch-read-model';
import { listPendingCharges } from './pending';

/**
 * `GET /admin/pending_charges?environment=` (the admin API's `/pending_charges`): every charge
 * whose outcome billing has not recorded yet, oldest first: the noted ones (renewals, retries,
 * direct creations) and the plan switches holding their subscription while their charge is
 * settled. What the reconciler is working on, for an operator (docs/lost-answers.md).
 */
export function mountPendingChargesRoute(app: Express, context: ServiceContext): void {
  app.get('/admin/pending_charges', validate({ query: AdminPendingChargesQuery }), async (req, res) => {
    const { environment } = res.locals.input.query as AdminPendingChargesQuery;
    const tenant: Tenant = { organization: adminOrganizationOf(req), environment };
    const { database, tables } = context.store;
    const noted = (await listPendingCharges(database, tables.schema, tenant)).map((row): PendingCharge => ({
      object: 'pending_charge',
      idempotency_key: row.key,
      purpose: row.purpose,
      subject: row.subject,
      attempt: row.attempt,
      amount: row.amount,
      asked_at: row.asked_at,
    }));
    const held = await heldSwitches(database, tables.schema, tenant);
    const data = [...noted, ...held].sort((a, b) => a.asked_at.localeCompare(b.asked_at));
    res.json({ object: 'list', data, has_more: false });
  });
}

async function heldSwitches(sql: SqlExecutor, schema: string, tenant: Tenant): Promise<PendingCharge[]> {
  const { rows } = await sql.query<{ document: SubscriptionSwitchStartedData }>(
    `SELECT s.document FROM ${switchesTable(schema)} s JOIN ${subscriptionsTable(schema)} sub ON sub.id = s.subscription_id
      WHERE sub.organization = $1 AND sub.environment = $2`,
    [tenant.organization, tenant.environment],
  );
  return rows.map(({ document: held }) => ({
    object: 'pending_charge',
    idempotency_key: invoiceChargeKey(held.invoice_id, 1),
    purpose: 'switch',
    subject: held.subscription_id,
    attempt: 1,
    amount: held.amount,
    asked_at: held.held_at ?? held.started_at,
  }));
}
