import { z } from 'zod';
import { ErrorEnvelope } from '../shared/errors';
import { cursorListEnvelope, limitParam, startingAfterParam } from '../shared/list';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { idText } from '../shared/text';
import { ChargeTrade } from './charges';
import { Refund } from './refunds';
import { CheckoutMode } from './sessions';

const timestamp = z.iso.datetime();

/**
 * A paid checkout's order (spec: "not shown"; designed as Stripe's charges and orders are): what
 * the buyer bought, what they paid and with what, and its refunds. A one-time purchase, or the
 * first payment of a subscription (`subscription_id`); renewals are invoices.
 */
export const Order = z
  .object({
    object: z.literal('order'),
    id: z.string().describe('prefix ord_'),
    checkout_session_id: z.string(),
    mode: CheckoutMode.describe('PAYMENT: a one-time purchase; SUBSCRIPTION: a first period; SETUP: a card saved'),
    customer_id: z.string().nullable(),
    customer_email: z.string().nullable(),
    product: z.object({ id: z.string(), name: z.string(), type: z.string() }),
    subscription_id: z.string().nullable(),
    status: z.enum(['paid', 'partially_refunded', 'refunded']),
    amount_subtotal: z.int().min(0).describe('TWD before the discount'),
    amount_total: z.int().min(0).describe('TWD paid'),
    amount_refunded: z.int().min(0).describe('TWD given back by refunds that succeeded'),
    currency: z.literal('TWD'),
    payment_method: z.object({ brand: z.string(), last4: z.string() }).nullable(),
    processor: ChargeTrade.shape.processor.describe('Who charged it: the sandbox simulator, ECPay or PAYUNi'),
    processor_reference: z
      .string()
      .nullable()
      .describe("The trade as the processor's back office names it (ECPay's MerchantTradeNo, PAYUNi's MerTradeNo)"),
    refunds: z.array(Refund).describe('Oldest first, whatever their status'),
    metadata: z.record(z.string(), z.string()).nullable(),
    paid_at: timestamp,
    created_at: timestamp.describe('When its checkout session was created'),
    livemode: z.boolean(),
  })
  .meta({ id: 'Order' });
export type Order = z.infer<typeof Order>;

export const ListOrdersQuery = z
  .object({
    limit: limitParam(10),
    starting_after: startingAfterParam('order'),
    customer_id: idText().optional().describe('Only this customer’s orders (prefix cus_)'),
    paid_from: z.iso.datetime({ offset: true }).optional().describe('Paid at or after (ISO 8601 with an offset)'),
    paid_before: z.iso.datetime({ offset: true }).optional().describe('Paid before (ISO 8601 with an offset)'),
  })
  .meta({ id: 'ListOrdersQuery' });
export type ListOrdersQuery = z.infer<typeof ListOrdersQuery>;

export const OrderList = cursorListEnvelope(Order).meta({ id: 'OrderList' });

export const OrderIdParams = z.object({ id: idText().describe('prefix ord_') });

export function registerOrderRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const common = { tags: ['Orders'], security: ['secretKey' as const] };
  const unauthorized = error('unauthorized: a Secret Key is needed');
  return registry
    .route({
      method: 'get',
      path: '/orders',
      oauthScope: 'orders:read',
      summary: 'List paid orders, the latest paid first',
      ...common,
      query: ListOrdersQuery,
      responses: {
        200: { description: 'A page of orders', schema: OrderList },
        400: invalidParametersResponse,
        401: unauthorized,
      },
    })
    .route({
      method: 'get',
      path: '/orders/{id}',
      oauthScope: 'orders:read',
      summary: 'Retrieve a paid order',
      ...common,
      params: OrderIdParams,
      responses: {
        200: { description: 'The order', schema: Order },
        400: invalidParametersResponse,
        401: unauthorized,
        404: error('not_found: no such paid order in this organization and environment'),
      },
    });
}
