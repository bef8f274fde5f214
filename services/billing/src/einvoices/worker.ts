import { ApiError, type Einvoice as EinvoiceChoice, type EinvoiceTaxType } from '@billing/contracts';
import { ExpectedVersionConflictError } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { einvoiceAggregate } from './aggregate';
import type { EinvoiceCommand, EinvoiceState } from './einvoice';
import {
  type EinvoiceBuyer,
  type EinvoiceProvider,
  EinvoiceUnanswered,
  type EinvoiceTaxType as ProviderTaxType,
} from './providers/port';
import { type DueEinvoice, findDueEinvoices, findEinvoicesToWarn } from './read-model';
import { einvoiceProviderOf } from './settings/provider-of';
import { splitAllowance } from './rules';
import { nudgedPasses } from '../shared/nudged-passes';

type Existing = Extract<EinvoiceState, { status: 'Existing' }>;
type Outcome = Exclude<EinvoiceCommand, { type: 'RequestEinvoice' | 'StartAttempt' | 'WarnDeadline' | 'RecordRefund' }>;

/**
 * The e-invoice worker (run by billing's sweep, and nudged after a payment): each e-invoice whose
 * pending action is due is claimed by one process (`StartAttempt`, leased), asked of its
 * provider, and the answer recorded. A lost answer is never read as "not issued": a retried
 * attempt asks the provider what it holds under the merchant order number first (and the
 * provider refuses that number twice). Then the deadline monitor warns about the e-invoices
 * still not issued close to their deadline.
 */
export async function runEinvoiceWork(context: ServiceContext): Promise<void> {
  const { store, now } = context;
  const { schema } = store.tables;
  for (const due of await findDueEinvoices(store.database, schema, now())) await attempt(context, due);
  for (const late of await findEinvoicesToWarn(store.database, schema, now())) {
    const tenant = { organization: late.organization, environment: late.environment };
    await handle(context, late, tenant, { type: 'WarnDeadline', data: { now: now() } });
    context.logger.warn(
      { einvoice: late.id, organization: late.organization },
      'an e-invoice is still not issued close to its legal deadline',
    );
  }
}

async function attempt(context: ServiceContext, due: DueEinvoice): Promise<void> {
  const tenant: Tenant = { organization: due.organization, environment: due.environment };
  const claimed = await claim(context, due, tenant);
  if (!claimed) return;
  const now = () => context.now();
  let outcome: Outcome;
  try {
    const provider = await einvoiceProviderOf(context, tenant, claimed.einvoice.provider);
    outcome = provider
      ? await act(provider, claimed, now())
      : failed(
          'einvoice_provider_unset',
          `${claimed.einvoice.provider} is no longer this organization's provider`,
          now(),
        );
  } catch (error) {
    if (!(error instanceof EinvoiceUnanswered)) throw error;
    outcome = failed('provider_unanswered', error.message, now());
  }
  await handle(context, due, tenant, outcome);
  if (outcome.type === 'RecordAttemptFailed') {
    context.logger.warn(
      { einvoice: due.id, action: claimed.einvoice.pending_action, code: outcome.data.code },
      'an e-invoice attempt failed; it is tried again',
    );
  }
}

/** The claim of the attempt; null when another process has it, or it is no longer due. */
async function claim(context: ServiceContext, due: DueEinvoice, tenant: Tenant): Promise<Existing | null> {
  try {
    const { state } = await einvoiceAggregate.handle(
      context.store,
      due.id,
      { type: 'StartAttempt', data: { now: context.now() } },
      { ...tenant, occurredAt: context.now() },
    );
    return state.status === 'Existing' ? state : null;
  } catch (error) {
    if (error instanceof ApiError && error.status === 409) return null;
    if (error instanceof ExpectedVersionConflictError) return null;
    throw error;
  }
}

async function handle(context: ServiceContext, due: DueEinvoice, tenant: Tenant, command: EinvoiceCommand) {
  await einvoiceAggregate.handle(context.store, due.id, command, { ...tenant, occurredAt: context.now() });
}

const failed = (code: string, message: string, now: Date): Outcome => ({
  type: 'RecordAttemptFailed',
  data: { code, message, now },
});

/** Asks the provider for the pending action; a retry first asks what the provider already holds. */
async function act(provider: EinvoiceProvider, state: Existing, now: Date): Promise<Outcome> {
  const { einvoice } = state;
  const retried = einvoice.attempt_count > 1;
  if (einvoice.pending_action === 'issue') {
    const held = retried ? await provider.query(einvoice.merchant_order_number, now) : null;
    if (held) return issued(held.invoiceNumber, held.randomCode, held.issuedAt, now);
    const answer = await provider.issue({ merchantOrderNo: einvoice.merchant_order_number, ...sale(state) }, now);
    return answer.status === 'issued'
      ? issued(answer.invoiceNumber, answer.randomCode, answer.issuedAt, now)
      : failed(answer.code, answer.message, now);
  }
  const invoiceNumber = einvoice.number!;
  const issuedAt = new Date(einvoice.issued_at!);
  if (einvoice.pending_action === 'void') {
    if (retried && (await provider.query(einvoice.merchant_order_number, now))?.voided) return voided(now);
    const answer = await provider.void({ invoiceNumber, issuedAt, reason: 'Refunded' }, now);
    return answer.status === 'voided' ? voided(now) : failed(answer.code, answer.message, now);
  }
  const allowance = einvoice.allowances.find((a) => a.status === 'pending');
  if (einvoice.pending_action !== 'allowance' || !allowance) return failed('nothing_pending', 'Nothing to ask', now);
  const request = {
    invoiceNumber,
    issuedAt,
    allowanceKey: allowanceKeyOf(allowance.refund_id),
    knownAllowanceNumbers: einvoice.allowances.flatMap((a) => (a.number ? [a.number] : [])),
    ...sale(state),
    total: allowance.amount,
    ...splitAllowance(allowance.amount, einvoice.tax_type),
    items: [{ description: einvoice.description, quantity: 1, unitPrice: allowance.amount, amount: allowance.amount }],
  };
  const found = retried && provider.findAllowance ? await provider.findAllowance(request, now) : null;
  if (found) return allowanced(allowance.refund_id, found.allowanceNumber, now);
  const answer = await provider.allowance(request, now);
  return answer.status === 'issued'
    ? allowanced(allowance.refund_id, answer.allowanceNumber, now)
    : failed(answer.code, answer.message, now);
}

const issued = (number: string, randomCode: string, issuedAt: Date, now: Date): Outcome => ({
  type: 'RecordIssued',
  data: { number, randomCode, issuedAt, now },
});
const voided = (now: Date): Outcome => ({ type: 'RecordVoided', data: { now } });
const allowanced = (refundId: string, number: string, now: Date): Outcome => ({
  type: 'RecordAllowanceIssued',
  data: { refundId, number, now },
});

/** The provider's key of an allowance: the refund id's random part (letters and digits). */
const allowanceKeyOf = (refundId: string) => refundId.replace(/^re_/, '').slice(0, 30);

/** What was sold, as the port takes it: one line, tax included. */
function sale(state: Existing) {
  const { einvoice, contact } = state;
  return {
    buyer: buyerOf(einvoice.buyer, contact.name),
    contact,
    taxType: TAX_TYPES[einvoice.tax_type],
    items: [{ description: einvoice.description, quantity: 1, unitPrice: einvoice.total, amount: einvoice.total }],
    total: einvoice.total,
    salesAmount: einvoice.sales_amount,
    taxAmount: einvoice.tax_amount,
  };
}

const TAX_TYPES: Record<EinvoiceTaxType, ProviderTaxType> = {
  TAXED: 'taxed',
  ZERO_RATED: 'zero_rated',
  EXEMPT: 'exempt',
};

function buyerOf(choice: EinvoiceChoice, name: string | null): EinvoiceBuyer {
  switch (choice.type) {
    case 'MEMBER':
      return { kind: 'member' };
    case 'MOBILE_BARCODE':
      return { kind: 'mobile_barcode', carrier: choice.carrier };
    case 'CITIZEN_CERTIFICATE':
      return { kind: 'citizen_certificate', carrier: choice.carrier };
    case 'DONATION':
      return { kind: 'donation', donationCode: choice.donation_code };
    case 'B2B':
      return { kind: 'company', taxId: choice.tax_id, companyName: choice.company_name ?? name ?? choice.tax_id };
    default: {
      const _exhaustive: never = choice;
      return { kind: 'member' };
    }
  }
}

/**
 * Runs the worker at once after a payment or refund asked for something, instead of a sweep
 * interval later (so the thank-you page can show the number): one pass at a time, and one more
 * after it when nudged meanwhile. The sweep runs it too; both are safe together (claims).
 */
export function einvoiceNudger(context: ServiceContext): { nudge: () => void; drain: () => Promise<void> } {
  return nudgedPasses(
    () => runEinvoiceWork(context),
    (err) => context.logger.error({ err }, 'the e-invoice worker failed; the sweep runs it again'),
  );
}
