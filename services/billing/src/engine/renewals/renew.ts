import { type ApiError, type Invoice } from '@billing/contracts';
import type { PaymentOutcome } from '../../invoices/invoice';
import { isRetryableWriteError } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { type ChargeOutcome, paymentPending } from '../../charges/charge';
import { findInvoice } from '../../invoices/read-model';
import { type DueSubscription, findSubscription } from '../../subscriptions/queries';
import { timeOn } from '../../test-clocks/read-model';
import { type Attempt, type AttemptRecord, chargeAttempts, recordAttempts, recordPaymentPending } from './attempts';
import { afterAnswer, nextStep } from './dunning';
import { type Renewal, byTenant, onThePlainPath, openInvoices, readDue, readInvoices } from './open';
import { afterSwitch } from './switches';

/** At most this many renewals in one batch: one charge call (checkout takes 100), a few transactions. */
export const RENEWAL_BATCH_SIZE = 100;

/**
 * Renews a subscription whose period has ended, or retries its open invoice (dunning), at `at`
 * (the service clock, or its test clock): the renewal pipeline over a list of one. Found held by
 * a plan switch: waits for the switch to end, then looks again (`afterSwitch`). Returns whether it
 * did something.
 */
export async function renewDue(context: ServiceContext, item: DueSubscription, at: Date): Promise<boolean> {
  const { changed, handedBack } = await renew(context, [item], at, { batch: false });
  const back = handedBack[0];
  if (!back) return changed.length > 0;
  if (back.why === 'switch') {
    const tenant: Tenant = { organization: item.organization, environment: item.environment };
    return afterSwitch(context, tenant, item.id, () => renewDue(context, item, at));
  }
  throw 'error' in back ? back.error : new Error(`renewing ${item.id} stopped: ${back.why}`);
}

/**
 * Renews many subscriptions due at `at` together: the renewal pipeline over the list, with a few
 * statements and one charge call per tenant instead of some twenty round trips each, on the plain
 * path only (open, charge attempt 1, paid, renewed). Everything off that path is handed back, for
 * `renewDue` one at a time: a subscription that is PAST_DUE or has no saved card, an invoice that
 * exists already (another engine, or a run cut short), a switch or a customer balance, a decline,
 * a charge without an answer, the items of a step that failed. The steps are idempotent and keyed,
 * so `renewDue` goes on from wherever the batch stopped and nothing is charged twice. Returns the
 * subscriptions it renewed and those handed back.
 */
export async function renewDueBatch(
  context: ServiceContext,
  items: DueSubscription[],
  at: Date,
): Promise<{ renewed: string[]; leftover: DueSubscription[] }> {
  const { changed, handedBack } = await renew(context, items, at, { batch: true });
  for (const back of handedBack) {
    if (back.why === 'failed' && !isRetryableWriteError(back.error)) {
      const count = back.items.length;
      context.logger.warn({ err: back.error, count }, `renewal batch: ${back.what} failed; renewing one by one`);
    }
  }
  return { renewed: changed, leftover: handedBack.flatMap((back) => back.items) };
}

/**
 * Items the pipeline could not finish, and why: a switch holds them, a batch leaves them to be run
 * alone (off the plain path, or declined), their charge got no answer, or a step failed.
 */
type HandedBack =
  | { why: 'switch' | 'off the plain path' | 'declined'; items: DueSubscription[] }
  | { why: 'unknown' | 'failed'; items: DueSubscription[]; error: unknown; what: string };

/**
 * A run of the pipeline: what it changed and what it handed back. A batch shares its transactions
 * and its charge call, so it takes the plain path only and hands the rest back; a list of one
 * takes every branch its subscription needs (dunning, a switch, the customer balance).
 */
type Run = { batch: boolean; changed: string[]; handedBack: HandedBack[] };

/**
 * The renewal pipeline: renews each due subscription of `items` at `at`, or retries its open
 * invoice. Each step runs over the whole list: read the subscriptions still due and the invoices
 * of their next periods, opening those not opened yet (one transaction); go on from each invoice
 * as it is (`nextStep`); charge the attempts (one call per tenant); record the answers and what
 * follows on the subscriptions (one transaction). Every step is idempotent and recorded before
 * the next, so two engines or a crash anywhere charge once: the invoice is opened once (its id is
 * derived), each charge is keyed by invoice and attempt (a repeated key answers the first charge),
 * an attempt is recorded once, and the subscription moves only for its period.
 */
async function renew(context: ServiceContext, items: DueSubscription[], at: Date, { batch }: { batch: boolean }) {
  const run: Run = { batch, changed: [], handedBack: [] };
  const invoiced = await invoicesOf(context, run, items, at);
  const attempts = await attemptsOf(context, run, invoiced, at);
  const records = await charge(context, run, attempts, at);
  try {
    await recordAttempts(context, records);
    run.changed.push(...records.map((r) => r.renewal.subscription.id));
  } catch (error) {
    failed(
      run,
      'recording the payments',
      records.map((r) => r.renewal),
      error,
    );
  }
  return run;
}

function failed(run: Run, what: string, renewals: Array<{ item: DueSubscription }>, error: unknown) {
  if (renewals.length > 0) run.handedBack.push({ why: 'failed', what, error, items: renewals.map((r) => r.item) });
}

/** The items still due, each with the invoice of its next period: opened already, or now. */
async function invoicesOf(context: ServiceContext, run: Run, items: DueSubscription[], at: Date) {
  const { database, tables } = context.store;
  let due: Renewal[];
  let invoices: Map<string, Invoice>;
  try {
    due = await readDue(context, items, at);
    invoices = await readInvoices(database, tables.schema, due);
    if (run.batch) {
      const { plain, off } = await onThePlainPath(database, tables.schema, due, invoices);
      if (off.length > 0) run.handedBack.push({ why: 'off the plain path', items: off.map((r) => r.item) });
      due = plain;
    }
  } catch (error) {
    failed(
      run,
      'reading the subscriptions',
      items.map((item) => ({ item })),
      error,
    );
    return [];
  }
  const toOpen = due.filter((r) => !invoices.has(r.invoiceId));
  try {
    const { opened, meanwhile, held } = await openInvoices(context, toOpen, at);
    for (const [id, invoice] of opened) invoices.set(id, invoice);
    if (held.length > 0) run.handedBack.push({ why: 'switch', items: held.map((r) => r.item) });
    // Opened by another engine meanwhile: off a batch's plain path; a list of one goes on from it.
    if (!run.batch) for (const [id, invoice] of meanwhile) invoices.set(id, invoice);
    const elsewhere = toOpen.filter((r) => meanwhile.has(r.invoiceId));
    if (run.batch && elsewhere.length > 0) {
      run.handedBack.push({ why: 'off the plain path', items: elsewhere.map((r) => r.item) });
    }
  } catch (error) {
    failed(run, 'opening the invoices', toOpen, error);
  }
  return due.flatMap((renewal) => {
    const invoice = invoices.get(renewal.invoiceId);
    return invoice ? [{ renewal, invoice }] : [];
  });
}

/** Goes on from each invoice as it is (`nextStep`): the attempts to charge now. */
async function attemptsOf(
  context: ServiceContext,
  run: Run,
  invoiced: Array<{ renewal: Renewal; invoice: Invoice }>,
  at: Date,
) {
  const attempts: Array<Attempt & { renewal: Renewal }> = [];
  for (const { renewal, invoice } of invoiced) {
    try {
      const step = await nextStep(context, renewal, invoice, at);
      if (step === 'changed') run.changed.push(renewal.subscription.id);
      if (step !== 'charge') continue;
      const { tenant, card } = renewal;
      attempts.push({ renewal, tenant, card, invoice, attempt: invoice.attempt_count + 1 });
    } catch (error) {
      failed(run, 'renewing', [renewal], error);
    }
  }
  return attempts;
}

/** Charges the attempts, one call per tenant: the answers to record (an unknown one is handed back). */
async function charge(context: ServiceContext, run: Run, attempts: Array<Attempt & { renewal: Renewal }>, at: Date) {
  const records: Array<AttemptRecord & { renewal: Renewal }> = [];
  for (const group of byTenant(attempts)) {
    let outcomes: ChargeOutcome[];
    try {
      outcomes = await chargeAttempts(context, group[0]!.tenant, group);
    } catch (error) {
      failed(
        run,
        'charging',
        group.map((a) => a.renewal),
        error,
      );
      continue;
    }
    for (const [i, { renewal, tenant, invoice, attempt }] of group.entries()) {
      const outcome = outcomes[i]!;
      if (outcome.status === 'pending') {
        // A transfer the customer makes: the invoice shows how, and the same key is asked again
        // until it is paid or its deadline passes (then recorded as any answer, dunning included).
        try {
          await recordPaymentPending(context, tenant, invoice, attempt, outcome.payment_instructions, at);
        } catch (error) {
          failed(run, 'recording', [renewal], error);
          continue;
        }
        const error = awaitingTransfer(invoice.id, attempt);
        run.handedBack.push({ why: 'unknown', what: 'charging', error, items: [renewal.item] });
        continue;
      }
      if (outcome.status === 'unknown') {
        const error = unknownOutcome(invoice.id, attempt);
        run.handedBack.push({ why: 'unknown', what: 'charging', error, items: [renewal.item] });
        continue;
      }
      // Dunning's steps are `renewDue`'s: it asks the same key again and gets this answer back.
      if (outcome.status === 'declined' && run.batch) {
        run.handedBack.push({ why: 'declined', items: [renewal.item] });
        continue;
      }
      try {
        const then = await afterAnswer(context, tenant, invoice, attempt, outcome);
        const subscriptionId = renewal.subscription.id;
        records.push({ renewal, tenant, subscriptionId, invoice, attempt, outcome, ...then, now: at });
      } catch (error) {
        failed(run, 'renewing', [renewal], error);
      }
    }
  }
  return records;
}

/** The renewal waits for the customer's transfer: the scheduler asks the same key again. */
export function awaitingTransfer(invoiceId: string, attempt: number): ApiError {
  return paymentPending(`Invoice ${invoiceId}, attempt ${attempt}, waits for the customer's transfer`);
}

/** The renewal's charge got no answer: nothing is recorded, and the scheduler asks the same key again. */
export function unknownOutcome(invoiceId: string, attempt: number): ApiError {
  return paymentPending(`The charge of invoice ${invoiceId}, attempt ${attempt}, got no answer; it is asked again`);
}

/**
 * The reconciler learned the outcome of attempt `attempt` of invoice `invoiceId` after its
 * answer was lost: a charge that succeeded is recorded as that attempt, and the subscription
 * enters the paid period, as a paid renewal; a decline is left for the next scheduled attempt,
 * which asks the same key and records it with its dunning step. An attempt recorded meanwhile
 * (the scheduler asked again) changes nothing.
 */
export async function recordLateInvoiceCharge(
  context: ServiceContext,
  tenant: Tenant,
  invoiceId: string,
  attempt: number,
  outcome: PaymentOutcome,
): Promise<void> {
  const { database, tables } = context.store;
  const invoice = await findInvoice(database, tables.schema, tenant, invoiceId);
  if (!invoice || invoice.status !== 'open' || invoice.attempt_count >= attempt || outcome.status !== 'succeeded')
    return;
  const subscription = invoice.subscription_id
    ? await findSubscription(database, tables.schema, tenant, invoice.subscription_id)
    : null;
  const at = subscription
    ? await timeOn(database, tables.schema, tenant, subscription.test_clock, context.now)
    : context.now();
  const subscriptionId = subscription?.id ?? null;
  await recordAttempts(context, [
    { tenant, subscriptionId, invoice, attempt, outcome, nextAttemptAt: null, unpaid: null, now: at },
  ]);
}
