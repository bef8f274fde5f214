import type { Invoice, PaymentInstructions, SavedPaymentMethod } from '@billing/contracts';
import {
  DEFAULT_RETRY_POLICY,
  type EventStore,
  type EventStoreTransaction,
  type RecordedEvent,
  type StreamAppend,
  WriteConflictError,
  isRetryableWriteError,
  retryDelayMs,
} from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { type ChargeOutcome, chargeSavedCards, chargesRecorded } from '../../charges/charge';
import { invoiceAggregate } from '../../invoices/aggregate';
import type { InvoiceEvent, InvoiceState, RecordPaymentAttempt } from '../../invoices/invoice';
import { invoiceChargeKey } from '../../invoices/payment';
import { subscriptionAggregate } from '../../subscriptions/aggregate';
import type { SubscriptionCommand } from '../../subscriptions/decide';

// The renewal pipeline's last steps (renew.ts), each over a list: charging the attempts, and
// recording their answers. Dunning's retries, a new card's retry and the reconciler's late
// answers record theirs the same way.

/** Charge attempt `attempt` of an open invoice, on the customer's saved card (`card`). */
export type Attempt = { tenant: Tenant; card: SavedPaymentMethod | null; invoice: Invoice; attempt: number };

/**
 * Charges attempts of one tenant, each keyed `<invoice>:<attempt>` and noted as pending until its
 * outcome is recorded, in one call to checkout. An invoice with nothing due is paid as it is; no
 * saved card is a decline. An outcome that is not known is never "declined": `unknown`, and the
 * invoice is left as it was for the reconciler (docs/lost-answers.md). Answers in order.
 */
export async function chargeAttempts(context: ServiceContext, tenant: Tenant, attempts: Attempt[]) {
  const outcomes = attempts.map((a): ChargeOutcome | null => {
    if (a.invoice.amount_due === 0) return { status: 'succeeded' };
    if (!a.card) return { status: 'declined', code: 'no_payment_method', message: 'The customer has no saved card' };
    return null;
  });
  const toCharge = attempts.filter((_, i) => outcomes[i] === null);
  if (toCharge.length > 0) {
    const answers = await chargeSavedCards(
      context,
      tenant,
      toCharge.map(({ card, invoice, attempt }) => ({
        card: card!,
        amount: invoice.amount_due,
        key: invoiceChargeKey(invoice.id, attempt),
        pending: { purpose: 'invoice' as const, subject: invoice.id, attempt },
      })),
    );
    let next = 0;
    outcomes.forEach((outcome, i) => (outcomes[i] = outcome ?? answers[next++]!));
  }
  return outcomes as ChargeOutcome[];
}

/**
 * Attempt `attempt` of `invoice` waits for the customer's transfer: the invoice shows the ATM
 * account or store code and its deadline (`invoice.payment_action_required`), once; the charge
 * stays pending until its answer is recorded.
 */
export async function recordPaymentPending(
  context: ServiceContext,
  tenant: Tenant,
  invoice: Invoice,
  attempt: number,
  instructions: PaymentInstructions,
  now: Date,
): Promise<void> {
  await invoiceAggregate.handle(
    context.store,
    invoice.id,
    { type: 'RecordPaymentPending', data: { attempt, instructions, now } },
    { ...tenant, occurredAt: now },
  );
}

/**
 * The answer to an attempt, to record on its invoice, and what follows on its subscription:
 * paid, it enters the invoice's period; unpaid, it goes PAST_DUE (`past_due`), or ends with the
 * invoice uncollectible (`end`), or stays as it is (null).
 */
export type AttemptRecord = {
  tenant: Tenant;
  /** The invoice's subscription; null: the invoice alone is recorded. */
  subscriptionId: string | null;
  invoice: Invoice;
  attempt: number;
  outcome: RecordPaymentAttempt['data']['outcome'];
  /** When dunning tries again after a decline (null: never). */
  nextAttemptAt: Date | null;
  unpaid: 'past_due' | 'end' | null;
  now: Date;
};

/**
 * Records the answers and what follows on the subscriptions in one transaction, each decided on
 * its streams' history (read at once) and appended at the version read; another writer meanwhile
 * (a second engine): decided again on the new history, as `handleCommand` does. Every step is
 * idempotent: an attempt recorded already changes nothing, and a subscription moves only for its
 * period. The charges are then no longer pending. Answers the invoices as recorded.
 */
export async function recordAttempts(context: ServiceContext, records: AttemptRecord[]): Promise<Invoice[]> {
  if (records.length === 0) return [];
  const { store } = context;
  const recorded = await retriedOnConflict(invoiceAggregate.stream(records[0]!.invoice.id), () =>
    store.transaction(async (tx) => {
      const streams = records.flatMap((r) => [
        invoiceAggregate.stream(r.invoice.id),
        ...(r.subscriptionId ? [subscriptionAggregate.stream(r.subscriptionId)] : []),
      ]);
      const histories = await store.readStreams(streams, tx);
      const appends: StreamAppend[] = [];
      const invoices = records.map((r) => {
        const { append, invoice, then } = decideRecord(r, histories.get(invoiceAggregate.stream(r.invoice.id))!);
        appends.push(append);
        if (r.subscriptionId && then) {
          const history = histories.get(subscriptionAggregate.stream(r.subscriptionId))!;
          const state = subscriptionAggregate.fold(history);
          appends.push({
            stream: subscriptionAggregate.stream(r.subscriptionId),
            events: subscriptionAggregate.decide(then, state),
            options: { expectedVersion: versionOf(history), ...r.tenant, occurredAt: r.now },
          });
        }
        return invoice;
      });
      await appendAndProject(tx, store, appends);
      return invoices;
    }),
  );
  await chargesRecorded(
    context,
    records.map((r) => invoiceChargeKey(r.invoice.id, r.attempt)),
  );
  return recorded;
}

/**
 * The invoice's events for the answer (and uncollectible, when it ends unpaid), the invoice as
 * the answer leaves it, and the command that follows on the subscription, if any.
 */
function decideRecord(r: AttemptRecord, history: RecordedEvent[]) {
  const { attempt, outcome, nextAttemptAt, now } = r;
  const before = invoiceAggregate.fold(history);
  const events = invoiceAggregate.decide(
    { type: 'RecordPaymentAttempt', data: { attempt, outcome, nextAttemptAt, now } },
    before,
  );
  const after = evolveInvoice(before, events);
  const invoice = after.status === 'Existing' ? after.invoice : r.invoice;
  if (invoice.status !== 'paid' && r.unpaid === 'end') {
    events.push(...invoiceAggregate.decide({ type: 'MarkUncollectible', data: { now } }, after));
  }
  const append: StreamAppend = {
    stream: invoiceAggregate.stream(r.invoice.id),
    events,
    options: { expectedVersion: versionOf(history), ...r.tenant, occurredAt: now },
  };
  return { append, invoice, then: r.subscriptionId ? subscriptionCommand(r, r.subscriptionId, invoice) : null };
}

/** Paid: the subscription enters the invoice's period; unpaid: as `unpaid` says. */
function subscriptionCommand(r: AttemptRecord, subscriptionId: string, invoice: Invoice): SubscriptionCommand | null {
  const { now } = r;
  if (invoice.status === 'paid') {
    return {
      type: 'RenewPaid',
      data: { subscriptionId, periodStart: invoice.period_start, invoiceId: invoice.id, now },
    };
  }
  if (r.unpaid === 'end') return { type: 'CancelForNonPayment', data: { subscriptionId, now } };
  if (r.unpaid === 'past_due') return { type: 'MarkPastDue', data: { subscriptionId, invoiceId: invoice.id, now } };
  return null;
}

/** Events decided here folded onto a state. */
const evolveInvoice = (state: InvoiceState, events: InvoiceEvent[]) => events.reduce(invoiceAggregate.evolve, state);

const versionOf = (history: RecordedEvent[]) => history.at(-1)?.stream_version ?? 0;

async function appendAndProject(tx: EventStoreTransaction, store: EventStore, appends: StreamAppend[]) {
  const results = await tx.appendMany(appends);
  const events = results.flatMap((r) => r.events);
  await invoiceAggregate.project?.(tx, store.tables.schema, events, store);
  await subscriptionAggregate.project?.(tx, store.tables.schema, events, store);
}

/** Runs `work` again from the start when another writer got in the way, with `handleCommand`'s bounds and pauses. */
async function retriedOnConflict<T>(stream: string, work: () => Promise<T>): Promise<T> {
  const policy = DEFAULT_RETRY_POLICY;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isRetryableWriteError(error)) throw error;
      if (attempt >= policy.maxAttempts) throw new WriteConflictError(stream, attempt, { cause: error });
      await policy.sleep(retryDelayMs(policy, attempt));
    }
  }
}
