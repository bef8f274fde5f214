import { createHmac } from 'node:crypto';
import {
  ApiError,
  type CallerIdentity,
  type CreateRefundBody,
  type InvoicePayment,
  type Refund,
  newId,
  notFound,
  type Tenant,
} from '@billing/contracts';
import { WriteConflictError } from '@billing/eventstore';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf, serviceCaller } from '../dependencies';
import type { SessionCommand } from '../sessions/decide';
import { findCallerSessionByOrder } from '../sessions/queries';
import { sessionAggregate } from '../sessions/aggregate';
import { type Session, sessionStream } from '../sessions/session';
import {
  type InvoicePaid,
  type InvoicePaymentCommand,
  invoicePaymentAggregate,
  invoicePaymentStream,
} from './invoice-payment';
import { chargeKeyOfPaid } from './order';
import { chargedAt, payuniRefundsByApi, refundCharge } from '../payments/refund-at-processor';
import { ecpayAuthorisationOf } from '../payments/ecpay-refunds';
import type { EcpayMerchant } from '../payments/ecpay/merchant';
import { PROCESSOR_UNAVAILABLE } from '../payments/settings/refusal';
import type { RequestRefund, SettleRefund } from './refund';

/** The payment a request names: an order (by `order_id`, or an invoice its order paid), or an invoice's charge. */
type Target = (
  | { kind: 'order'; session: Session; invoiceId: string | null; field: 'order_id' | 'invoice_id' }
  | { kind: 'invoice'; invoice: InvoicePaid }
) & { /** What billing gave back from the payment as credit (`RequestRefund`'s `credited`). */ credited: number };

const PROCESSOR_NAMES = { ecpay: 'ECPay', payuni: 'PAYUNi' } as const;

/**
 * Refunds go where the money was taken: the simulator, PAYUNi or ECPay (an order it charged, or a
 * renewal of a card or plan it keeps, which the simulator has no record of). A card payment goes
 * back through the processor's API; an ATM or convenience-store payment does not (the merchant
 * transfers it back in the processor's site), and is refused with 402 before anything is held,
 * as is a charge no processor shows (docs/payments.md). ECPay not answering the question is 503,
 * nothing held: a refund there is asked only once, so it is not asked blind.
 */
async function refuseUnlessRefundable(context: ServiceContext, caller: CallerIdentity, target: Target): Promise<void> {
  const chargeKey = target.kind === 'order' ? chargeKeyOfPaid(target.session) : target.invoice.chargeKey;
  const path = target.kind === 'order' ? target.field : 'invoice_id';
  const refuse = (message: string): never => {
    throw ApiError.of('payment_required', message, [{ path, code: PROCESSOR_UNAVAILABLE, message }]);
  };
  const charged = await chargedAt(context, caller, chargeKey);
  if (!charged) {
    if ((await dependenciesOf(context).processor.lookup(chargeKey))?.status === 'succeeded') return;
    refuse(
      "This payment is not one the organization's payment processor shows: refund it in the processor's merchant site (docs/payments.md)",
    );
  }
  const name = PROCESSOR_NAMES[charged!.processor];
  const kind =
    charged!.processor === 'payuni'
      ? (await payuniRefundsByApi(context, charged!.merchant, chargeKey))
        ? 'card'
        : 'code'
      : await ecpayPaymentKind(context, charged!.merchant, chargeKey);
  if (kind === 'none') refuse(`${name} does not show this payment as paid: nothing was refunded`);
  if (kind === 'code') {
    refuse(
      `An ATM or convenience-store payment through ${name} is refunded by bank transfer: refund it in ${name}'s merchant site (docs/payments.md)`,
    );
  }
}

/** What ECPay shows of the charge: a card payment, a code paid (ATM or store), or none; 503 when it does not answer (nothing is held). */
async function ecpayPaymentKind(
  context: ServiceContext,
  merchant: EcpayMerchant,
  chargeKey: string,
): Promise<'card' | 'code' | 'none'> {
  const paid = await ecpayAuthorisationOf(context, merchant, chargeKey).catch(() => {
    throw new ApiError(
      503,
      'processor_unavailable',
      'ECPay did not answer about the payment; nothing was refunded. Try again shortly',
    );
  });
  return !paid ? 'none' : paid.card ? 'card' : 'code';
}

/**
 * `POST /v1/refunds`: holds the amount on the payment's stream (decided against every other
 * refund of it at the expected version), then asks the processor under the refund's id, then
 * records its answer. A refusal appends nothing. If the processor does not answer, the refund
 * stays `pending` and the sweep asks again under the same key (`settlePendingRefunds`).
 */
export async function createRefund(
  context: ServiceContext,
  caller: CallerIdentity,
  body: CreateRefundBody,
  idempotencyKey: string | undefined,
): Promise<Refund> {
  const { processor } = dependenciesOf(context);
  const refusal = processor.refusal(caller.environment);
  if (refusal) throw ApiError.of('payment_required', refusal);
  const target = await resolveTarget(context, caller, body);
  await refuseUnlessRefundable(context, caller, target);
  const request: RequestRefund['data'] = {
    refundId: refundIdFor(context, caller, idempotencyKey, body),
    amount: body.amount,
    reason: body.reason ?? null,
    field: target.kind === 'order' ? target.field : 'invoice_id',
    invoiceId: target.kind === 'order' ? target.invoiceId : target.invoice.invoiceId,
    credited: target.credited,
    now: context.now(),
  };
  const [stream, chargeKey] =
    target.kind === 'order'
      ? [sessionStream(target.session.id), chargeKeyOfPaid(target.session)]
      : [invoicePaymentStream(target.invoice.invoiceId), target.invoice.chargeKey];
  const refunds =
    target.kind === 'order'
      ? await runOnStream(context, stream, caller, { type: 'RefundOrder', data: request })
      : await runOnStream(context, stream, caller, {
          type: 'RefundInvoice',
          data: { ...request, invoice: target.invoice },
        });
  const refund = refunds.find((r) => r.id === request.refundId)!;
  if (refund.status !== 'pending') return refund;
  const { organization, environment } = caller;
  const pending = {
    id: refund.id,
    organization,
    environment,
    stream_id: stream,
    charge_key: chargeKey,
    amount: refund.amount,
  };
  return (await settleAtProcessor(context, pending)) ?? refund;
}

async function resolveTarget(context: ServiceContext, caller: CallerIdentity, body: CreateRefundBody): Promise<Target> {
  const { store } = context;
  if (body.order_id !== undefined) {
    const session = await findCallerSessionByOrder(store.database, store.tables.schema, caller, body.order_id);
    if (!session) throw notFound(`No such order: ${body.order_id}`);
    const credited = session.mode === 'SUBSCRIPTION' ? await creditedFromOrder(context, caller, session) : 0;
    return { kind: 'order', session, invoiceId: null, field: 'order_id', credited };
  }
  const invoiceId = body.invoice_id!;
  const payment = await billingPayment(context, caller, `/internal/invoices/${encodeURIComponent(invoiceId)}/payment`);
  if (!payment) throw notFound(`No such invoice: ${invoiceId}`);
  const credited = payment.amount_credited ?? 0;
  if (payment.order_id !== null) {
    // The first invoice of a subscription was paid by the checkout order: one payment, one limit.
    const session = await findCallerSessionByOrder(store.database, store.tables.schema, caller, payment.order_id);
    if (!session) throw notFound(`No such invoice: ${invoiceId}`);
    return { kind: 'order', session, invoiceId, field: 'invoice_id', credited };
  }
  const charged = payment.status === 'paid' && payment.charge_key !== null;
  return {
    kind: 'invoice',
    invoice: {
      invoiceId,
      amountPaid: charged ? payment.amount_paid : 0,
      chargeKey: payment.charge_key ?? '',
      environment: caller.environment,
    },
    credited,
  };
}

/** Billing's word on an invoice's payment (null: no such invoice); 503 when billing cannot answer. */
async function billingPayment(context: ServiceContext, caller: CallerIdentity, path: string) {
  const billing = dependenciesOf(context).billing;
  if (!billing) throw new ApiError(503, 'service_unavailable', 'billing is not configured');
  const answer = await billing.get<InvoicePayment>(path, serviceCaller(caller.organization, caller.environment));
  if (answer.status === 404) return null;
  if (answer.status !== 200) throw new ApiError(503, 'service_unavailable', `billing answered ${answer.status}`);
  return answer.body;
}

/** What switches credited from the invoice a subscription's order paid (0 before billing recorded it). */
async function creditedFromOrder(context: ServiceContext, caller: CallerIdentity, session: Session) {
  // Checkout run without billing has no subscriptions, so nothing was credited.
  if (!dependenciesOf(context).billing) return 0;
  const path = `/internal/orders/${encodeURIComponent(session.order.id)}/invoice-payment`;
  return (await billingPayment(context, caller, path))?.amount_credited ?? 0;
}

/**
 * A new id, or, when the request carries an `Idempotency-Key`, one derived from it, the API
 * key and the body (keyed with the internal secret, so it cannot be guessed): a request run
 * again after its first run failed on the way back (a 5xx forgets the gateway's claim) finds
 * the refund the first run held instead of holding a second one.
 */
export function refundIdFor(
  context: ServiceContext,
  caller: CallerIdentity,
  idempotencyKey: string | undefined,
  body: CreateRefundBody,
): string {
  if (!idempotencyKey) return newId('refund');
  const request = [caller.organization, caller.environment, caller.keyId, idempotencyKey];
  const fields = [body.order_id ?? null, body.invoice_id ?? null, body.amount ?? null, body.reason ?? null];
  const digest = createHmac('sha256', context.internalSecret)
    .update(JSON.stringify([...request, ...fields]))
    .digest();
  const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
  let id = '';
  for (let i = 0; i < 24; i++) id += alphabet[digest[i]! % 62];
  return `re_${id}`;
}

/** A pending refund as the sweep and the request know it. */
export type RefundToSettle = {
  id: string;
  organization: string;
  environment: CallerIdentity['environment'];
  stream_id: string;
  charge_key: string;
  amount: number;
};

/**
 * Asks the processor for the refund under its id (a repeat answers the first refund) and
 * records the answer once. No answer, or one it cannot give yet (deferred): undefined, the
 * refund stays pending for the sweep.
 */
export async function settleAtProcessor(context: ServiceContext, refund: RefundToSettle): Promise<Refund | undefined> {
  let outcome: SettleRefund['data']['outcome'];
  try {
    const result = await refundCharge(context, refund, {
      idempotencyKey: refund.id,
      environment: refund.environment,
      chargeKey: refund.charge_key,
      amount: refund.amount,
      now: context.now(),
    });
    if (result.status === 'deferred') {
      context.logger.debug({ refund_id: refund.id, until: result.until }, 'a refund waits for the processor');
      return undefined;
    }
    outcome =
      result.status === 'succeeded'
        ? { status: 'succeeded', processorRefundId: result.refund_id }
        : { status: 'failed', message: result.message };
  } catch (err) {
    context.logger.warn({ err, refund_id: refund.id }, 'the processor did not answer a refund; the sweep asks again');
    return undefined;
  }
  try {
    const refunds = await runOnStream(context, refund.stream_id, refund, {
      type: 'SettleRefund',
      data: { refundId: refund.id, outcome, now: context.now() },
    });
    return refunds.find((r) => r.id === refund.id);
  } catch (err) {
    // The refund is held and made: it is not "nothing written" (409). The sweep records it.
    if (!(err instanceof WriteConflictError)) throw err;
    context.logger.warn({ err, refund_id: refund.id }, 'recording a refund kept colliding; the sweep records it');
    return undefined;
  }
}

/** Runs a refund command on the payment's stream, with the read models in its transaction; the refunds after it. */
async function runOnStream(
  context: ServiceContext,
  stream: string,
  tenant: Tenant,
  command: SessionCommand | InvoicePaymentCommand,
): Promise<Refund[]> {
  const { store } = context;
  const options = { ...tenant, occurredAt: context.now() };
  const sessionId = sessionAggregate.idOf(stream);
  if (sessionId !== undefined) {
    const { state } = await sessionAggregate.handle(store, sessionId, command as SessionCommand, options);
    return state.status === 'Exists' ? (state.session.refunds ?? []) : [];
  }
  const invoiceId = invoicePaymentAggregate.idOf(stream);
  if (invoiceId === undefined) throw new Error(`${stream} is not the stream of a payment`);
  const { state } = await invoicePaymentAggregate.handle(store, invoiceId, command as InvoicePaymentCommand, options);
  return state.refunds;
}
