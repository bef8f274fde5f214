import type { Invoice, SavedPaymentMethod, Subscription } from '@billing/contracts';
import type { RecordedEvent, SqlExecutor, StreamAppend } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { customersTable } from '../../customers/read-model';
import { renewalInvoiceId } from '../../invoices/ids';
import { invoiceAggregate } from '../../invoices/aggregate';
import type { InvoiceState, OpenInvoice } from '../../invoices/invoice';
import { findInvoicesById, nextInvoiceNumbers } from '../../invoices/read-model';
import { nextPeriodEndOf } from '../../subscriptions/decide';
import { periodDiscount } from '../../subscriptions/discount';
import type { DueSubscription } from '../../subscriptions/queries';
import { subscriptionsTable } from '../../subscriptions/read-model';
import { claimUsageLines } from './usage-lines';
import { heldBySwitch, offThePlainPathIds, withCustomerBalance } from './switches';

// The renewal pipeline's first steps (renew.ts), each over a list: which subscriptions are due,
// and the invoices of their next periods, as they are or opened now.

/** A due subscription on its way through the pipeline: its tenant, its saved card, its next period's invoice. */
export type Renewal = {
  item: DueSubscription;
  tenant: Tenant;
  subscription: Subscription;
  card: SavedPaymentMethod | null;
  invoiceId: string;
};

/** Live, not canceling at period end, and its period over (PAST_DUE: its open invoice decides). */
function isDue(subscription: Subscription, at: Date): boolean {
  if (subscription.status === 'CANCELED' || subscription.cancel_at_period_end) return false;
  return Date.parse(subscription.current_period_end) <= at.getTime();
}

/**
 * The items still due at `at`, read at once with their customers' saved cards; one that is gone,
 * or no longer due (another engine renewed it), is left out: nothing to do.
 */
export async function readDue(context: ServiceContext, items: DueSubscription[], at: Date): Promise<Renewal[]> {
  const { database, tables } = context.store;
  const { rows } = await database.query<{
    id: string;
    organization: string;
    environment: Tenant['environment'];
    document: Subscription;
    payment_method: SavedPaymentMethod | null;
  }>(
    `SELECT s.id, s.organization, s.environment, s.document, c.payment_method
     FROM ${subscriptionsTable(tables.schema)} s LEFT JOIN ${customersTable(tables.schema)} c ON c.id = s.customer_id
     WHERE s.id = ANY($1::text[])`,
    [items.map((item) => item.id)],
  );
  const found = new Map(rows.map((row) => [row.id, row]));
  return items.flatMap((item) => {
    const row = found.get(item.id);
    if (!row || row.organization !== item.organization || row.environment !== item.environment) return [];
    const subscription = row.document;
    if (!isDue(subscription, at)) return [];
    const tenant = { organization: row.organization, environment: row.environment };
    const invoiceId = renewalInvoiceId(subscription.id, subscription.current_period_end);
    return [{ item, tenant, subscription, card: row.payment_method, invoiceId }];
  });
}

/** The renewals' invoices that exist already (an earlier run, or another engine, opened them), by id. */
export async function readInvoices(sql: SqlExecutor, schema: string, renewals: Renewal[]) {
  const tenants = new Map(renewals.map((r) => [r.invoiceId, r.tenant]));
  const found = await findInvoicesById(sql, schema, [...tenants.keys()]);
  const same = (a: Tenant | undefined, b: Tenant) =>
    a?.organization === b.organization && a.environment === b.environment;
  return new Map(
    found
      .filter(({ invoice, tenant }) => same(tenants.get(invoice.id), tenant))
      .map(({ invoice }) => [invoice.id, invoice]),
  );
}

/**
 * What a batch of renewals takes: the plain path, a live subscription (ACTIVE or TRIAL) with a
 * saved card, whose invoice is not opened yet, that no switch holds and whose customer has no
 * balance. The rest (`off`) is for `renewDue`, one at a time.
 */
export async function onThePlainPath(
  sql: SqlExecutor,
  schema: string,
  renewals: Renewal[],
  invoices: Map<string, Invoice>,
): Promise<{ plain: Renewal[]; off: Renewal[] }> {
  const live = (r: Renewal) => (r.subscription.status === 'ACTIVE' || r.subscription.status === 'TRIAL') && r.card;
  const candidates = renewals.filter((r) => live(r) && !invoices.has(r.invoiceId));
  const switchingOrOwing = await offThePlainPathIds(
    sql,
    schema,
    candidates.map((r) => r.subscription),
  );
  const plain = candidates.filter((r) => !switchingOrOwing.has(r.subscription.id));
  return { plain, off: renewals.filter((r) => !plain.includes(r)) };
}

/**
 * Opens the invoices of the renewals' next periods, all in one transaction (see `openTogether`).
 * Those another engine opened meanwhile are read as they are (`meanwhile`), the rest opened again
 * without them. Answers the invoices, and the renewals a switch holds or moved (not opened).
 */
export async function openInvoices(context: ServiceContext, renewals: Renewal[], at: Date) {
  const opened = new Map<string, Invoice>();
  const meanwhile = new Map<string, Invoice>();
  let toOpen = renewals;
  while (toOpen.length > 0) {
    try {
      const { invoices, held } = await openTogether(context, toOpen, at);
      for (const invoice of invoices) opened.set(invoice.id, invoice);
      return { opened, meanwhile, held };
    } catch (error) {
      if (!(error instanceof OpenedMeanwhile)) throw error;
      for (const [id, invoice] of error.invoices) meanwhile.set(id, invoice);
      toOpen = toOpen.filter((r) => !error.invoices.has(r.invoiceId));
    }
  }
  return { opened, meanwhile, held: [] as Renewal[] };
}

/**
 * One transaction: an invoice opened already rolls it back (`OpenedMeanwhile`); the subscriptions'
 * rows are locked (`heldBySwitch`), and one a switch holds or moved is left out; each
 * organization's numbers are taken at once, in a fixed order of organizations, so that two engines
 * queue rather than deadlock; each invoice gets its plan's line, its usage lines, its coupon's
 * discount and its customer's balance, and its stream is created at version 0.
 */
async function openTogether(context: ServiceContext, renewals: Renewal[], at: Date) {
  const { store } = context;
  const { schema } = store.tables;
  return store.transaction(async (tx) => {
    const openedMeanwhile = async () => {
      const found = await readInvoices(tx, schema, renewals);
      if (found.size > 0) throw new OpenedMeanwhile(found);
    };
    await openedMeanwhile();
    const moved = await heldBySwitch(
      tx,
      schema,
      renewals.map((r) => r.subscription),
    );
    const held = renewals.filter((r) => moved.has(r.subscription.id));
    const numbered: Array<{ renewal: Renewal; number: string }> = [];
    for (const group of byTenant(renewals.filter((r) => !moved.has(r.subscription.id)))) {
      const numbers = await nextInvoiceNumbers(tx, schema, group[0]!.tenant, group.length);
      group.forEach((renewal, i) => numbered.push({ renewal, number: numbers[i]! }));
    }
    if (numbered.length === 0) return { invoices: [], held };
    // The numbers' row locks queue every opener of these organizations' invoices: one that opened
    // one of these while we waited has committed. Then roll back, giving the numbers back.
    await openedMeanwhile();
    const appends: StreamAppend[] = [];
    for (const { renewal, number } of numbered) {
      const command = openRenewalInvoice(renewal.subscription, renewal.invoiceId, renewal.tenant, number, at);
      command.data.lines.push(
        ...(await claimUsageLines(tx, schema, renewal.tenant, renewal.subscription, renewal.invoiceId)),
      );
      await withCustomerBalance(tx, store, renewal.tenant, command);
      appends.push({
        stream: invoiceAggregate.stream(renewal.invoiceId),
        events: invoiceAggregate.decide(command, invoiceAggregate.initialState()),
        options: { expectedVersion: 0, ...renewal.tenant, occurredAt: at },
      });
    }
    const results = await tx.appendMany(appends);
    await invoiceAggregate.project?.(
      tx,
      schema,
      results.flatMap((r) => r.events),
      store,
    );
    const invoices = results.map((result, i) => {
      const state = invoiceAggregate.fold(result.events);
      if (state.status === 'Empty') throw new Error(`invoice ${numbered[i]!.renewal.invoiceId} not opened`);
      return state.invoice;
    });
    return { invoices, held };
  });
}

/** Rolls back the opening of invoices that another engine opened first. */
class OpenedMeanwhile extends Error {
  constructor(readonly invoices: Map<string, Invoice>) {
    super(`invoices ${[...invoices.keys()].join(', ')} were opened meanwhile`);
  }
}

/** The command that opens the invoice of the subscription's next period (its plan's line, its coupon's discount). */
function openRenewalInvoice(
  subscription: Subscription,
  invoiceId: string,
  tenant: Tenant,
  number: string,
  at: Date,
): OpenInvoice {
  const start = subscription.current_period_end;
  const end = nextPeriodEndOf(subscription);
  const every =
    subscription.interval_count === 1
      ? subscription.interval
      : `${subscription.interval_count} ${subscription.interval}s`;
  return {
    type: 'OpenInvoice',
    data: {
      invoiceId,
      number,
      ...tenant,
      customerId: subscription.customer_id,
      subscriptionId: subscription.id,
      lines: [
        {
          description: `${subscription.product.name} (every ${every})`,
          amount: subscription.price,
          period: { start, end },
          kind: 'subscription',
        },
      ],
      discountAmount: periodDiscount(subscription, start, end),
      periodStart: start,
      periodEnd: end,
      now: at,
    },
  };
}

/** Groups by organization and environment, in a fixed order. */
export function byTenant<T extends { tenant: Tenant }>(items: T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = `${item.tenant.organization}\u0000${item.tenant.environment}`;
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return [...groups.keys()].sort().map((key) => groups.get(key)!);
}
