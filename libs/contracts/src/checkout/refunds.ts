import { z } from 'zod';
import { ErrorEnvelope } from '../shared/errors';
import { cursorListEnvelope, limitParam, startingAfterParam } from '../shared/list';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { idText } from '../shared/text';

/**
 * Refunds (issue 13, part 7; docs/decisions/0009-refunds.md): money given back for a paid
 * checkout order or a paid invoice, in full or in part, never more than was paid in all.
 * Served by checkout, which owns the payment processor and every charge.
 */
const timestamp = z.iso.datetime();

/** Why the merchant refunds, as Stripe names it; optional. */
export const RefundReason = z.enum(['duplicate', 'fraudulent', 'requested_by_customer']).meta({ id: 'RefundReason' });
export type RefundReason = z.infer<typeof RefundReason>;

/** `pending` until the processor answers (its amount is held against the payment), then `succeeded` or `failed`. */
export const RefundStatus = z.enum(['pending', 'succeeded', 'failed']).meta({ id: 'RefundStatus' });
export type RefundStatus = z.infer<typeof RefundStatus>;

export const Refund = z
  .object({
    object: z.literal('refund'),
    id: z.string().describe('Prefix re_'),
    amount: z.int().min(1).describe('TWD'),
    currency: z.literal('TWD'),
    reason: RefundReason.nullable(),
    status: RefundStatus,
    failure_reason: z.string().nullable().describe('Why the processor refused it; null unless failed'),
    order_id: z
      .string()
      .nullable()
      .describe('The checkout order refunded (also for the first invoice of a subscription)'),
    invoice_id: z.string().nullable().describe('The invoice named in the request; null for a refund asked by order'),
    checkout_session_id: z.string().nullable(),
    created_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'Refund' });
export type Refund = z.infer<typeof Refund>;

export const CreateRefundBody = z
  .strictObject({
    order_id: idText().optional().describe('A paid checkout order, ord_; or invoice_id'),
    invoice_id: idText().optional().describe('A paid invoice, in_; or order_id'),
    amount: z.int().min(1).optional().describe('TWD; default: everything not refunded yet'),
    reason: RefundReason.optional(),
  })
  .superRefine((body, ctx) => {
    const given = [body.order_id, body.invoice_id].filter((id) => id !== undefined).length;
    if (given === 1) return;
    ctx.addIssue({
      code: 'custom',
      path: given === 0 ? ['order_id'] : ['invoice_id'],
      message: given === 0 ? 'Give order_id or invoice_id' : 'Give order_id or invoice_id, not both',
    });
  })
  .meta({ id: 'CreateRefundBody' });
export type CreateRefundBody = z.infer<typeof CreateRefundBody>;

export const RefundIdParams = z
  .object({ id: idText().describe('Refund id, prefix re_') })
  .meta({ id: 'RefundIdParams' });

export const ListRefundsQuery = z
  .object({
    limit: limitParam(10),
    starting_after: startingAfterParam('refund'),
    order_id: idText().optional(),
    invoice_id: idText().optional(),
  })
  .meta({ id: 'ListRefundsQuery' });
export type ListRefundsQuery = z.infer<typeof ListRefundsQuery>;

export const RefundList = cursorListEnvelope(Refund).meta({ id: 'RefundList' });

// ---------------------------------------------------------------- events (checkout.events)

/**
 * Occurs when a refund is created (public: refund.created): its amount is held against the
 * payment while the processor is asked, `status` pending.
 */
export const RefundCreatedData = z
  .object({
    refund_id: z.string(),
    amount: z.int().min(1),
    reason: RefundReason.nullable(),
    order_id: z.string().nullable(),
    invoice_id: z.string().nullable(),
    checkout_session_id: z.string().nullable(),
    charge_key: z.string().describe('The processor key of the charge refunded'),
    created_at: timestamp,
    object: Refund,
  })
  .meta({ id: 'RefundCreatedData' });
export type RefundCreatedData = z.infer<typeof RefundCreatedData>;

/** Occurs when the processor gave the money back (public: refund.updated, `status` succeeded). */
export const RefundSucceededData = z
  .object({
    refund_id: z.string(),
    processor_refund_id: z.string(),
    succeeded_at: timestamp,
    object: Refund,
  })
  .meta({ id: 'RefundSucceededData' });
export type RefundSucceededData = z.infer<typeof RefundSucceededData>;

/** Occurs when the processor refused the refund (public: refund.failed); its amount is free again. */
export const RefundFailedData = z
  .object({
    refund_id: z.string(),
    failure_reason: z.string(),
    failed_at: timestamp,
    object: Refund,
  })
  .meta({ id: 'RefundFailedData' });
export type RefundFailedData = z.infer<typeof RefundFailedData>;

// ---------------------------------------------------------------- internal: billing to checkout

/**
 * `GET /internal/invoices/{id}/payment` (billing): what checkout needs to refund an invoice.
 * `charge_key` is the processor key of the charge that paid it (`<invoice id>:<attempt>` for a
 * renewal); null when checkout's order paid it (`order_id`) or nothing was charged.
 */
export const InvoicePayment = z
  .object({
    invoice_id: z.string(),
    status: z.enum(['draft', 'open', 'paid', 'void', 'uncollectible']),
    amount_paid: z.int().min(0),
    amount_credited: z.int().min(0).default(0).describe('Of amount_paid, what a plan switch gave back as credit'),
    order_id: z.string().nullable(),
    checkout_session_id: z.string().nullable(),
    charge_key: z.string().nullable(),
  })
  .meta({ id: 'InvoicePayment' });
export type InvoicePayment = z.infer<typeof InvoicePayment>;

// ---------------------------------------------------------------- OpenAPI

export function registerRefundRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const common = { tags: ['Refunds'], security: ['secretKey' as const] };
  const unauthorized = error('unauthorized: a Secret Key is needed');
  return registry
    .route({
      method: 'post',
      path: '/refunds',
      summary: 'Refund a paid order or invoice, in full or in part',
      ...common,
      body: CreateRefundBody,
      responses: {
        201: { description: 'The refund: succeeded, or pending while the processor answers', schema: Refund },
        400: error('bad_request: malformed JSON'),
        401: unauthorized,
        402: error('payment_required: the processor does not move money in this environment'),
        404: error('not_found: no such order or invoice in this organization and environment'),
        409: error('conflict: concurrent refunds of the payment kept colliding; nothing was written'),
        422: error(
          'validation_error: the body; amount more than is left to refund (amount_too_large), ' +
            'nothing to refund (not_paid, already_refunded)',
        ),
      },
    })
    .route({
      method: 'get',
      path: '/refunds',
      summary: 'List refunds, newest first',
      ...common,
      query: ListRefundsQuery,
      responses: {
        200: { description: 'A page of refunds', schema: RefundList },
        400: invalidParametersResponse,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/refunds/{id}',
      summary: 'Retrieve a refund',
      ...common,
      params: RefundIdParams,
      responses: {
        200: { description: 'The refund', schema: Refund },
        400: invalidParametersResponse,
        401: unauthorized,
        404: error('not_found: no such refund'),
      },
    });
}
