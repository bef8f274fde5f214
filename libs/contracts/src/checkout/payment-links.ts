import { z } from 'zod';
import { CHECKOUT_METADATA_LIMITS } from './sessions';
import { ErrorEnvelope } from '../shared/errors';
import { cursorListEnvelope, limitParam, startingAfterParam } from '../shared/list';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { ProductType } from '../catalog/products';
import { idText } from '../shared/text';

const LinkMetadata = z
  .record(
    z.string().min(1).max(CHECKOUT_METADATA_LIMITS.keyLength),
    z.string().max(CHECKOUT_METADATA_LIMITS.valueLength),
  )
  .refine((m) => Object.keys(m).length <= CHECKOUT_METADATA_LIMITS.keys, {
    message: `at most ${CHECKOUT_METADATA_LIMITS.keys} keys`,
  });

export const CollectPaymentMethod = z.enum(['always', 'if_required']);

/** `POST /payment-links`, camelCase as the spec writes it. URL rules are checked by checkout. */
export const CreatePaymentLinkBody = z
  .strictObject({
    productId: idText().min(1).optional(),
    productSlug: idText().min(1).optional(),
    promotionCode: z.string().min(1).max(100).optional(),
    collectPaymentMethod: CollectPaymentMethod.default('always'),
    successUrl: z.string().min(1).max(2048).optional().describe('HTTPS; may contain {CHECKOUT_SESSION_ID}'),
    maxCompletions: z.number().int().min(1).nullable().default(null),
    metadata: LinkMetadata.optional(),
    locale: z
      .enum(['zh-TW', 'en'])
      .nullable()
      .optional()
      .describe("The checkout page's language; null: the buyer's browser language"),
  })
  .refine((b) => b.productId !== undefined || b.productSlug !== undefined, {
    message: 'productId or productSlug is required',
    path: ['productId'],
  })
  .meta({ id: 'CreatePaymentLinkBody' });
export type CreatePaymentLinkBody = z.infer<typeof CreatePaymentLinkBody>;

export const UpdatePaymentLinkBody = z
  .strictObject({
    active: z.boolean().optional(),
    promotionCode: z.string().min(1).max(100).nullable().optional(),
    collectPaymentMethod: CollectPaymentMethod.optional(),
    successUrl: z.string().min(1).max(2048).nullable().optional(),
    maxCompletions: z.number().int().min(1).nullable().optional(),
    metadata: LinkMetadata.nullable().optional(),
    locale: z.enum(['zh-TW', 'en']).nullable().optional(),
  })
  .meta({ id: 'UpdatePaymentLinkBody' });
export type UpdatePaymentLinkBody = z.infer<typeof UpdatePaymentLinkBody>;

export const ListPaymentLinksQuery = z.object({
  limit: limitParam(20),
  starting_after: startingAfterParam('payment link'),
  active: z
    .enum(['true', 'false'])
    .transform((v) => v === 'true')
    .optional(),
});
export type ListPaymentLinksQuery = z.infer<typeof ListPaymentLinksQuery>;

export const PaymentLinkIdParams = z.object({ id: idText().describe('prefix plink_') });

export const PaymentLink = z
  .object({
    object: z.literal('payment_link'),
    id: z.string(),
    url: z.string().describe('PAYMENT_LINK_URL/<url_id>'),
    url_id: z.string().describe('Base62 short code'),
    active: z.boolean(),
    product_id: z.string(),
    product: z.object({
      id: z.string(),
      name: z.string(),
      slug: z.string().nullable(),
      price: z.number(),
      currency: z.string(),
      type: ProductType,
    }),
    promotion_code: z.string().nullable(),
    collect_payment_method: CollectPaymentMethod,
    success_url: z.string().nullable(),
    max_completions: z.number().nullable(),
    metadata: z.record(z.string(), z.string()).nullable(),
    locale: z.enum(['zh-TW', 'en']).nullable().describe("The checkout page's language; null: the browser's"),
    environment: z.enum(['SANDBOX', 'PRODUCTION']),
    view_count: z.number(),
    session_count: z.number(),
    completed_count: z.number(),
    created_at: z.string(),
    livemode: z.boolean(),
  })
  .meta({ id: 'PaymentLink' });
export type PaymentLink = z.infer<typeof PaymentLink>;

export const PaymentLinkList = cursorListEnvelope(PaymentLink).meta({ id: 'PaymentLinkList' });
export const DeletedPaymentLink = z.object({ id: z.string(), deleted: z.literal(true) });

export function registerPaymentLinkRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const error = (description: string) => ({ description, schema: ErrorEnvelope });
  const common = { tags: ['Payment links'], security: ['secretKey' as const] };
  return registry
    .route({
      method: 'post',
      path: '/payment-links',
      summary: 'Create a payment link',
      ...common,
      body: CreatePaymentLinkBody,
      responses: {
        201: { description: 'The payment link', schema: PaymentLink },
        401: error('API key invalid or missing'),
        404: error('Product absent, inactive or of another organization'),
        422: error('Body validation failed'),
      },
    })
    .route({
      method: 'get',
      path: '/payment-links',
      summary: 'List payment links',
      ...common,
      query: ListPaymentLinksQuery,
      responses: {
        200: { description: 'Newest first', schema: PaymentLinkList },
        400: invalidParametersResponse,
        401: error('API key'),
      },
    })
    .route({
      method: 'get',
      path: '/payment-links/{id}',
      summary: 'Retrieve a payment link',
      ...common,
      params: PaymentLinkIdParams,
      responses: { 200: { description: 'The link', schema: PaymentLink }, 404: error('No such link') },
    })
    .route({
      method: 'patch',
      path: '/payment-links/{id}',
      summary: 'Update a payment link',
      ...common,
      params: PaymentLinkIdParams,
      body: UpdatePaymentLinkBody,
      responses: {
        200: { description: 'The link', schema: PaymentLink },
        404: error('No such link'),
        422: error('Body validation failed'),
      },
    })
    .route({
      method: 'delete',
      path: '/payment-links/{id}',
      summary: 'Deactivate a payment link',
      ...common,
      params: PaymentLinkIdParams,
      responses: { 200: { description: 'Deactivated', schema: DeletedPaymentLink }, 404: error('No such link') },
    });
}
