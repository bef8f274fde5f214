import type { Invoice, SavedPaymentMethod, Subscription } from '@billing/contracts';
import { type RecordedEvent, type StreamAppend, isRetryableWriteError } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { customersTable } from '../../customers/read-model';
import { type ChargeOutcome, chargeSavedCards, chargesRecorded } from '../../charges/charge';
import { type InvoiceCommand, type InvoiceState, invoiceAggregate, invoiceStream } from '../../invoices/invoice';
import { invoicesTable, nextInvoiceNumbers, projectInvoices } from '../../invoices/read-model';
import { type SubscriptionCommand, subscriptionAggregate } from '../../subscriptions/decide';
import type { DueSubscription } from '../../subscriptions/queries';
import { projectSubscriptions, subscriptionsTable } from '../../subscriptions/read-model';
import { subscriptionStream } from '../../subscriptions/subscription';
import { offThePlainPath, offThePlainPathIds } from './switches';
import { invoiceChargeKey } from '../../invoices/payment';
import { renewalInvoiceId } from '../../invoices/ids';
import { isDue, openRenewalInvoice } from './renew';

/** At most this many renewals in one batch: one charge call (checkout takes 100), a few transactions. */
export const RENEWAL_BATCH_SIZE = 100;

type Candidate = {
  item: DueSubscription;
  tenant: Tenant;
  subscription: Subscription;
  card: SavedPaymentMethod;
  invoiceId: string;
};
type Opened = Candidate & { invoice: Invoice };

/**
 * Renews many subscriptions due at `at` together, with a few statements and one charge call per
 * batch instead of some twenty round trips each: the plain path only. It opens the invoices of
 * the next periods in one transaction (their numbers taken at once), charges the saved cards in
 * one call to checkout (each keyed `<invoice>:1`), then records the payments and renews the
 * subscriptions in one transaction, deciding each on its stream's history as `renewDue` does.
 *
 * Everything off that path is handed back, for `renewDue` one at a time: a subscription that is
 * PAST_DUE or has no saved card, an invoice that exists already (another engine, or a run cut
 * short), a decline, a failed charge call, a conflict with another writer. Its steps are the
 * same idempotent, keyed steps (invoice id derived from subscription and period, charge keyed by
 * invoice and attempt, an attempt recorded once, the period moved once), so `renewDue` goes on
 * from wherever the batch stopped and nothing is charged twice. Returns the subscriptions it
 * renewed and those handed back.
 */
export async function renewDueBatch(
  context: ServiceContext,
  items: DueSubscription[],
  at: Date,
): Promise<{ renewed: string[]; leftover: DueSubscription[] }> {
  const leftover: DueSubscription[] = [];
  const handBack = (what: string, batch: Candidate[], error: unknown) => {
    if (!isRetryableWriteError(error)) {
      context.logger.warn({ err: error, count: batch.length }, `renewal batch: ${what} failed; renewing one by one`);
    }
    leftover.push(...batch.map((c) => c.item));
  };
  const candidates = await load(context, items, at, leftover);
  if (candidates.length === 0) return { renewed: [], leftover };

  let opened: Opened[];
  try {
    opened = await openInvoices(context, candidates, at);
  } catch (error) {
    handBack('opening the invoices', candidates, error);
    return { renewed: [], leftover };
  }

  const paid: Opened[] = [];
  for (const group of byTenant(opened)) {
    try {
      const outcomes = await charge(context, group);
      group.forEach((o, i) => (outcomes[i]?.status === 'succeeded' ? paid.push(o) : leftover.push(o.item)));
    } catch (error) {
      handBack('charging', group, error);
    }
  }

  try {
    const renewed = await recordAndRenew(context, paid, at, leftover);
    const recorded = paid.filter((o) => renewed.includes(o.subscription.id) && o.invoice.amount_due > 0);
    await chargesRecorded(
      context,
      recorded.map((o) => invoiceChargeKey(o.invoice.id, o.invoice.attempt_count + 1)),
    );
    return { renewed, leftover };
  } catch (error) {
    handBack('recording the payments', paid, error);
    return { renewed: [], leftover };
  }
}

/** The due subscriptions on the plain path, with their saved card and the id of the invoice to open. */
async function load(
  context: ServiceContext,
  items: DueSubscription[],
  at: Date,
  leftover: DueSubscription[],
): Promise<Candidate[]> {
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
  let candidates: Candidate[] = [];
  for (const item of items) {
    const row = found.get(item.id);
    // Gone, or no longer due (another engine renewed it): nothing to do, as in renewDue.
    if (!row || row.organization !== item.organization || row.environment !== item.environment) continue;
    const subscription = row.document;
    if (!isDue(subscription, at)) continue;
    const plain = (subscription.status === 'ACTIVE' || subscription.status === 'TRIAL') && row.payment_method;
    if (!plain) {
      leftover.push(item);
      continue;
    }
    const invoiceId = renewalInvoiceId(subscription.id, subscription.current_period_end);
    const tenant = { organization: row.organization, environment: row.environment };
    candidates.push({ item, tenant, subscription, card: row.payment_method!, invoiceId });
  }
  if (candidates.length === 0) return candidates;
  const switching = await offThePlainPathIds(
    database,
    tables.schema,
    candidates.map((c) => c.subscription),
  );
  for (const c of candidates.filter((c) => switching.has(c.item.id))) leftover.push(c.item);
  candidates = candidates.filter((c) => !switching.has(c.item.id));
  const existing = await database.query<{ id: string }>(
    `SELECT id FROM ${invoicesTable(tables.schema)} WHERE id = ANY($1::text[])`,
    [candidates.map((c) => c.invoiceId)],
  );
  const opened = new Set(existing.rows.map((row) => row.id));
  for (const c of candidates.filter((c) => opened.has(c.invoiceId))) leftover.push(c.item);
  return candidates.filter((c) => !opened.has(c.invoiceId));
}

/**
 * Opens every invoice in one transaction: each organization's numbers taken at once (in a fixed
 * order of organizations, so that two engines queue rather than deadlock), every stream created
 * at version 0. One invoice opened meanwhile by another engine fails it all, rolled back with
 * its numbers.
 */
async function openInvoices(context: ServiceContext, candidates: Candidate[], at: Date): Promise<Opened[]> {
  const { store } = context;
  const { schema } = store.tables;
  return store.transaction(async (tx) => {
    // A plan switch under way, or a customer balance, takes them off the plain path (renewDue).
    if (
      await offThePlainPath(
        tx,
        schema,
        candidates.map((c) => c.subscription),
      )
    ) {
      throw new Error('a switch or a customer balance: renewing one by one');
    }
    const appends: StreamAppend[] = [];
    const order: Candidate[] = [];
    for (const group of byTenant(candidates)) {
      const numbers = await nextInvoiceNumbers(tx, schema, group[0]!.tenant, group.length);
      group.forEach((c, i) => {
        const command = openRenewalInvoice(c.subscription, c.invoiceId, c.tenant, numbers[i]!, at);
        appends.push({
          stream: invoiceStream(c.invoiceId),
          events: invoiceAggregate.decide(command, invoiceAggregate.initialState()),
          options: { expectedVersion: 0, ...c.tenant, occurredAt: at },
        });
        order.push(c);
      });
    }
    const results = await tx.appendMany(appends);
    await projectInvoices(
      tx,
      schema,
      results.flatMap((r) => r.events),
    );
    return order.map((c, i) => {
      const state = foldInvoice(results[i]!.events);
      if (state.status === 'Empty') throw new Error(`invoice ${c.invoiceId} not opened`);
      return { ...c, invoice: state.invoice };
    });
  });
}

/** The first attempt of each invoice of one tenant, in one call; an invoice with nothing due is paid as it is. */
async function charge(context: ServiceContext, group: Opened[]): Promise<ChargeOutcome[]> {
  const toCharge = group.filter((o) => o.invoice.amount_due > 0);
  const answers = new Map<string, ChargeOutcome>();
  if (toCharge.length > 0) {
    const attempt = (o: Opened) => o.invoice.attempt_count + 1;
    const outcomes = await chargeSavedCards(
      context,
      group[0]!.tenant,
      toCharge.map((o) => ({
        card: o.card,
        amount: o.invoice.amount_due,
        key: invoiceChargeKey(o.invoice.id, attempt(o)),
        pending: { purpose: 'invoice' as const, subject: o.invoice.id, attempt: attempt(o) },
      })),
    );
    toCharge.forEach((o, i) => answers.set(o.invoice.id, outcomes[i]!));
  }
  return group.map((o) => answers.get(o.invoice.id) ?? { status: 'succeeded' });
}

/**
 * Records each paid first attempt on its invoice and moves its subscription into the next
 * period, all in one transaction, each decided on its stream's history (read at once) and
 * appended at the version read: a stream another writer moved meanwhile fails it all.
 */
async function recordAndRenew(
  context: ServiceContext,
  paid: Opened[],
  at: Date,
  leftover: DueSubscription[],
): Promise<string[]> {
  if (paid.length === 0) return [];
  const { store } = context;
  const { schema } = store.tables;
  return store.transaction(async (tx) => {
    const streams = paid.flatMap((o) => [invoiceStream(o.invoice.id), subscriptionStream(o.subscription.id)]);
    const histories = await store.readStreams(streams, tx);
    const appends: StreamAppend[] = [];
    const renewed: string[] = [];
    for (const o of paid) {
      const invoiceHistory = histories.get(invoiceStream(o.invoice.id))!;
      const record: InvoiceCommand = {
        type: 'RecordPaymentAttempt',
        data: { attempt: o.invoice.attempt_count + 1, outcome: { status: 'succeeded' }, nextAttemptAt: null, now: at },
      };
      const before = foldInvoice(invoiceHistory);
      const invoiceEvents = invoiceAggregate.decide(record, before);
      const after = foldInvoice([...invoiceHistory, ...(invoiceEvents as unknown as RecordedEvent[])]);
      if (after.status === 'Empty' || after.invoice.status !== 'paid') {
        leftover.push(o.item);
        continue;
      }
      const subscriptionHistory = histories.get(subscriptionStream(o.subscription.id))!;
      const renew: SubscriptionCommand = {
        type: 'RenewPaid',
        data: {
          subscriptionId: o.subscription.id,
          periodStart: after.invoice.period_start,
          invoiceId: o.invoice.id,
          now: at,
        },
      };
      const subscriptionState = subscriptionHistory.reduce(
        subscriptionAggregate.evolve,
        subscriptionAggregate.initialState(),
      );
      const version = (history: RecordedEvent[]) => history.at(-1)?.stream_version ?? 0;
      appends.push(
        {
          stream: invoiceStream(o.invoice.id),
          events: invoiceEvents,
          options: { expectedVersion: version(invoiceHistory), ...o.tenant, occurredAt: at },
        },
        {
          stream: subscriptionStream(o.subscription.id),
          events: subscriptionAggregate.decide(renew, subscriptionState),
          options: { expectedVersion: version(subscriptionHistory), ...o.tenant, occurredAt: at },
        },
      );
      renewed.push(o.subscription.id);
    }
    const results = await tx.appendMany(appends);
    const recorded = results.flatMap((r) => r.events);
    await projectInvoices(tx, schema, recorded);
    await projectSubscriptions(tx, schema, recorded);
    return renewed;
  });
}

function foldInvoice(events: RecordedEvent[]): InvoiceState {
  return events.reduce(invoiceAggregate.evolve, invoiceAggregate.initialState());
}

/** Groups by organization and environment, in a fixed order. */
function byTenant<T extends { tenant: Tenant }>(items: T[]): T[][] {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = `${item.tenant.organization}\u0000${item.tenant.environment}`;
    groups.set(key, [...(groups.get(key) ?? []), item]);
  }
  return [...groups.keys()].sort().map((key) => groups.get(key)!);
}
