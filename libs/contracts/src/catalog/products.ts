import { z } from 'zod';
import { ErrorEnvelope } from '../shared/errors';
import { Environment } from '../events/envelope';
import { listEnvelope } from '../shared/list';
import { type OpenApiRegistry, invalidParametersResponse } from '../shared/openapi';
import { TEXT_LIMITS, idText } from '../shared/text';

export const ProductType = z.enum(['SUBSCRIPTION', 'ONE_TIME', 'CREDITS', 'DONATION']).meta({ id: 'ProductType' });
export type ProductType = z.infer<typeof ProductType>;

export const ProductInterval = z.enum(['day', 'week', 'month', 'year']).meta({ id: 'ProductInterval' });
export type ProductInterval = z.infer<typeof ProductInterval>;

export const PRODUCT_LIMITS = {
  name: 255,
  slug: 100,
  description: 5000,
  metadataKeys: 50,
  metadataKey: 40,
  metadataValue: 500,
} as const;

/** URL-safe: lowercase letters, digits and hyphens, neither starting nor ending with a hyphen. */
export const PRODUCT_SLUG_PATTERN = /^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/;

const limits = PRODUCT_LIMITS;

/** Most credits one purchase (or one period of a plan) grants, and most days they may last. */
export const CREDIT_GRANT_LIMITS = { amount: 1_000_000_000, expiresAfterDays: 3650 } as const;

/**
 * What a product grants on the customer's credit balance (docs/credits.md). A CREDITS product:
 * `amount` credits per purchase, expiring `expires_after_days` after the payment (null: never).
 * A SUBSCRIPTION product: an allowance of `amount` credits for each paid period; without
 * `rollover` it expires at the period's end (or `expires_after_days` after the grant, if that
 * is sooner), with `rollover` unused credits carry over (expiring `expires_after_days` after
 * the grant, or never).
 */
export const ProductCredits = z
  .strictObject({
    amount: z.int().min(1).max(CREDIT_GRANT_LIMITS.amount).describe('Credits one purchase, or one paid period, grants'),
    expires_after_days: z
      .int()
      .min(1)
      .max(CREDIT_GRANT_LIMITS.expiresAfterDays)
      .nullable()
      .default(null)
      .describe("Days after the grant the credits expire; null: never (a plan's allowance: at the period's end)"),
    rollover: z
      .boolean()
      .optional()
      .describe(
        "SUBSCRIPTION only: true carries a period's unused allowance over; false (the default) lets it expire at the period's end",
      ),
  })
  .meta({ id: 'ProductCredits' });
export type ProductCredits = z.infer<typeof ProductCredits>;

/** Most metered prices a plan holds, and the bounds of each. */
export const METERED_PRICE_LIMITS = { prices: 5, unitAmount: 1_000_000, packageSize: 1_000_000_000 } as const;

/** What a meter's key may look like: what usage events name (docs/usage.md). */
export const METER_KEY_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;

/**
 * A plan's price for the usage one meter measures, billed in arrears on each renewal invoice
 * (docs/usage.md): `unit_amount` TWD for every `package_size` units, the period's quantity
 * rounded up to whole packages.
 */
export const MeteredPrice = z
  .strictObject({
    meter: z
      .string()
      .max(100)
      .regex(METER_KEY_PATTERN, 'meter is a meter key: letters, digits and _ . : -, at most 100 characters')
      .describe('The key of the meter whose usage this prices (its aggregation sums, counts or takes the maximum)'),
    unit_amount: z.int().min(0).max(METERED_PRICE_LIMITS.unitAmount).describe('Whole TWD for each package of units'),
    package_size: z
      .int()
      .min(1)
      .max(METERED_PRICE_LIMITS.packageSize)
      .default(1)
      .describe("Units one unit_amount pays for; a period's quantity is rounded up to whole packages"),
  })
  .meta({ id: 'MeteredPrice' });
export type MeteredPrice = z.infer<typeof MeteredPrice>;

const MeteredPrices = z
  .array(MeteredPrice)
  .max(METERED_PRICE_LIMITS.prices)
  .refine((prices) => new Set(prices.map((p) => p.meter)).size === prices.length, 'each meter is priced once');

const ProductMetadata = z
  .record(
    z
      .string()
      .min(1, 'metadata keys must not be empty')
      .max(limits.metadataKey, `metadata keys are at most ${limits.metadataKey} characters`),
    z.string().max(limits.metadataValue, `metadata values are at most ${limits.metadataValue} characters`),
  )
  .superRefine((metadata, ctx) => {
    if (Object.keys(metadata).length <= limits.metadataKeys) return;
    ctx.addIssue({
      code: 'too_big',
      origin: 'object',
      maximum: limits.metadataKeys,
      inclusive: true,
      input: metadata,
      message: `metadata holds at most ${limits.metadataKeys} keys`,
    });
  })
  .describe(`String keys (1-${limits.metadataKey} characters) to string values (up to ${limits.metadataValue})`);

/**
 * Every product field as a merchant sets it, one schema each, without defaults: create adds
 * the defaults, update takes any subset.
 */
const field = {
  // An empty string is too short, and only that: `abort` keeps it from failing the pattern too.
  name: z.string().min(1, { abort: true }).max(limits.name).regex(/\S/, 'name must not be blank'),
  slug: z
    .string()
    .min(1, { abort: true })
    .max(limits.slug)
    .regex(PRODUCT_SLUG_PATTERN, 'slug may hold lowercase letters, digits and hyphens, not starting or ending with one')
    .nullable()
    .describe('URL-friendly identifier, unique per organization and environment'),
  description: z.string().max(limits.description).nullable(),
  type: ProductType,
  interval: ProductInterval.nullable().describe('Required for SUBSCRIPTION; null for every other type'),
  interval_count: z.int().min(1).describe('Interval units per billing period (3 with month = quarterly)'),
  price: z.int().min(0).describe('Integer in whole TWD (299 means 299 TWD)'),
  currency: z.literal('TWD'),
  trial_days: z.int().min(1).nullable().describe('SUBSCRIPTION only; null when there is no trial'),
  display_order: z.int().nullable(),
  metadata: ProductMetadata.nullable(),
  // Optional: products made before credits existed have none.
  credits: ProductCredits.nullable()
    .optional()
    .describe(
      'CREDITS: what a purchase grants the buyer; SUBSCRIPTION: the allowance each paid period grants; null: nothing',
    ),
  metered_prices: MeteredPrices.nullable()
    .optional()
    .describe(
      'SUBSCRIPTION only: the usage each renewal invoice bills for the period that ended, per meter (docs/usage.md); null or absent: none',
    ),
};

const ProductFieldsShape = z.strictObject(field);

/** The rules between fields, for a complete set of fields (a new product, or one merged with a change). */
function checkTypeRules(product: z.infer<typeof ProductFieldsShape>, ctx: z.RefinementCtx): void {
  checkCredits(product, ctx);
  if (product.metered_prices?.length && product.type !== 'SUBSCRIPTION') {
    ctx.addIssue({
      code: 'invalid_value',
      values: [null],
      input: product.metered_prices,
      path: ['metered_prices'],
      message: `metered_prices is only for SUBSCRIPTION products, not ${product.type}`,
    });
  }
  if (product.type === 'SUBSCRIPTION') {
    if (product.interval === null) {
      ctx.addIssue({
        code: 'invalid_type',
        expected: 'string',
        input: null,
        path: ['interval'],
        message: 'interval is required for SUBSCRIPTION products',
      });
    }
    return;
  }
  const notFor = `is only for SUBSCRIPTION products, not ${product.type}`;
  if (product.interval !== null) {
    ctx.addIssue({
      code: 'invalid_value',
      values: [null],
      input: product.interval,
      path: ['interval'],
      message: `interval ${notFor}`,
    });
  }
  if (product.interval_count !== 1) {
    ctx.addIssue({
      code: 'invalid_value',
      values: [1],
      input: product.interval_count,
      path: ['interval_count'],
      message: `interval_count other than 1 ${notFor}`,
    });
  }
  if (product.trial_days !== null) {
    ctx.addIssue({
      code: 'invalid_value',
      values: [null],
      input: product.trial_days,
      path: ['trial_days'],
      message: `trial_days ${notFor}`,
    });
  }
}

/** A CREDITS product grants credits per purchase, a SUBSCRIPTION product per period; only a plan rolls over. */
function checkCredits(product: z.infer<typeof ProductFieldsShape>, ctx: z.RefinementCtx): void {
  const { credits, type } = product;
  if (credits == null || type === 'SUBSCRIPTION') return;
  if (type !== 'CREDITS') {
    ctx.addIssue({
      code: 'invalid_value',
      values: [null],
      input: credits,
      path: ['credits'],
      message: `credits is only for CREDITS and SUBSCRIPTION products, not ${type}`,
    });
  } else if (credits.rollover !== undefined) {
    ctx.addIssue({
      code: 'invalid_value',
      values: [undefined],
      input: credits.rollover,
      path: ['credits', 'rollover'],
      message: 'rollover is only for SUBSCRIPTION products: a purchase of credits has no period',
    });
  }
}

/** A complete, valid set of product fields: what the catalog stores for each product. */
export const ProductFields = ProductFieldsShape.superRefine(checkTypeRules);
export type ProductFields = z.infer<typeof ProductFields>;

/** Admin API: `POST /admin/products` (the organization comes from the admin path). */
export const CreateProductBody = z
  .strictObject({
    environment: Environment,
    name: field.name,
    slug: field.slug.default(null),
    description: field.description.default(null),
    type: field.type,
    interval: field.interval.default(null),
    interval_count: field.interval_count.default(1),
    price: field.price,
    currency: field.currency.default('TWD'),
    trial_days: field.trial_days.default(null),
    display_order: field.display_order.default(null),
    metadata: field.metadata.default(null),
    credits: ProductCredits.nullable()
      .default(null)
      .describe(field.credits.description ?? ''),
    metered_prices: MeteredPrices.nullable()
      .default(null)
      .describe(field.metered_prices.description ?? ''),
  })
  .superRefine(checkTypeRules)
  .meta({ id: 'CreateProductBody' });
export type CreateProductBody = z.infer<typeof CreateProductBody>;

/**
 * Admin API: `PATCH /admin/products/{id}`. Any subset of the fields; `metadata` replaces the
 * whole object. `active: false` archives, `true` restores. The rules between fields are
 * checked on the product as it would be after the change.
 */
export const UpdateProductBody = ProductFieldsShape.partial()
  .extend({ active: z.boolean().optional().describe('false archives the product, true restores it') })
  .meta({ id: 'UpdateProductBody' });
export type UpdateProductBody = z.infer<typeof UpdateProductBody>;

const timestamp = z.iso.datetime();

export const Product = z
  .object({
    object: z.literal('product'),
    id: z.string().describe('prefix prod_'),
    name: z.string(),
    slug: z.string().nullable(),
    description: z.string().nullable(),
    type: ProductType,
    interval: ProductInterval.nullable(),
    interval_count: z.int(),
    price: z.int().describe('Integer in whole currency units (299 means 299 TWD)'),
    currency: z.literal('TWD'),
    trial_days: z.int().nullable(),
    display_order: z.int().nullable(),
    metadata: z.record(z.string(), z.string()).nullable(),
    credits: ProductCredits.nullable().describe(
      'CREDITS: what a purchase grants the buyer; SUBSCRIPTION: the allowance each paid period grants (docs/credits.md)',
    ),
    metered_prices: z
      .array(MeteredPrice)
      .nullable()
      .describe('SUBSCRIPTION: the usage each renewal invoice bills, per meter (docs/usage.md); null: none'),
    active: z.boolean().describe('false means archived'),
    created_at: timestamp,
    updated_at: timestamp.describe('Returned only by single-product reads'),
    livemode: z.boolean(),
  })
  .meta({ id: 'Product' });
export type Product = z.infer<typeof Product>;

/** List items carry every field but `updated_at` (spec: it is returned only by single reads). */
export const ProductListItem = Product.omit({ updated_at: true }).meta({ id: 'ProductListItem' });
export type ProductListItem = z.infer<typeof ProductListItem>;

export const ProductList = listEnvelope(ProductListItem)
  .extend({ products: z.array(ProductListItem).describe('The same items as `data`, where SDKs read them') })
  .meta({ id: 'ProductList' });
export type ProductList = z.infer<typeof ProductList>;

export const ListProductsQuery = z.object({
  type: z
    .string()
    .max(TEXT_LIMITS.token)
    .transform((value) => value.toUpperCase())
    .pipe(ProductType)
    .optional()
    .describe('SUBSCRIPTION, ONE_TIME, CREDITS or DONATION, case-insensitive'),
  status: z.literal('archived').optional().describe('`archived` lists archived products; omitted lists active ones'),
});
export type ListProductsQuery = z.infer<typeof ListProductsQuery>;

export const ProductIdParams = z.object({ id: idText().describe('Product id, prefix prod_') });
export const ProductSlugParams = z.object({ slug: idText() });

// Payloads of the catalog's internal stream events (`product-<id>`), relayed to `catalog.events`.

/** Occurs when a product is created; carries every field. */
export const ProductCreatedData = z
  .object({
    product_id: z.string(),
    organization: z.string(),
    environment: Environment,
    ...field,
    created_at: timestamp,
  })
  .meta({ id: 'ProductCreatedData' });
export type ProductCreatedData = z.infer<typeof ProductCreatedData>;

/** Occurs when product fields change; `changes` holds only the fields that changed. */
export const ProductUpdatedData = z
  .object({ product_id: z.string(), changes: z.object(field).partial(), updated_at: timestamp })
  .meta({ id: 'ProductUpdatedData' });
export type ProductUpdatedData = z.infer<typeof ProductUpdatedData>;

/** Occurs when a product is archived: no new sales, still readable by id and slug. */
export const ProductArchivedData = z
  .object({ product_id: z.string(), archived_at: timestamp })
  .meta({ id: 'ProductArchivedData' });
export type ProductArchivedData = z.infer<typeof ProductArchivedData>;

/** Occurs when an archived product is made active again. */
export const ProductRestoredData = z
  .object({ product_id: z.string(), restored_at: timestamp })
  .meta({ id: 'ProductRestoredData' });
export type ProductRestoredData = z.infer<typeof ProductRestoredData>;

/** The public product reads (spec: Products (read-only)), under the /v1 server URL. */
export function registerProductRoutes(registry: OpenApiRegistry): OpenApiRegistry {
  const unauthorized = { description: 'API key invalid, missing or not allowed here', schema: ErrorEnvelope };
  const notFound = { description: 'No such product in this organization and environment', schema: ErrorEnvelope };
  return registry
    .route({
      method: 'get',
      path: '/products',
      oauthScope: 'products:read',
      summary: 'List products, newest first',
      tags: ['Products'],
      security: ['secretKey', 'publishableKey'],
      query: ListProductsQuery,
      responses: {
        200: { description: 'Active products, or archived ones with status=archived', schema: ProductList },
        401: unauthorized,
        400: invalidParametersResponse,
      },
    })
    .route({
      method: 'get',
      path: '/products/{id}',
      oauthScope: 'products:read',
      summary: 'Retrieve a product',
      tags: ['Products'],
      security: ['secretKey'],
      params: ProductIdParams,
      responses: { 200: { description: 'The product', schema: Product }, 401: unauthorized, 404: notFound },
    })
    .route({
      method: 'get',
      path: '/products/by-slug/{slug}',
      oauthScope: 'products:read',
      summary: 'Retrieve a product by its slug',
      tags: ['Products'],
      security: ['secretKey', 'publishableKey'],
      params: ProductSlugParams,
      responses: { 200: { description: 'The product', schema: Product }, 401: unauthorized, 404: notFound },
    });
}
