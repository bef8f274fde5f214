import { z } from 'zod';
import { Einvoice as EinvoiceChoice } from '../checkout/sessions';
import { Environment } from '../events/envelope';
import { cursorListEnvelope, limitParam, startingAfterParam } from '../shared/list';
import { idText } from '../shared/text';
import { BillingSettingsEnvironment } from './billing-settings';

/**
 * Taiwan e-invoices (電子發票): an organization's provider per environment, and the e-invoice
 * issued for each paid order or invoice (docs/einvoices.md).
 */

const timestamp = z.iso.datetime();
const Tenant = { organization: z.string(), environment: Environment };

export const EinvoiceProviderName = z.enum(['none', 'ecpay', 'amego']);
export type EinvoiceProviderName = z.infer<typeof EinvoiceProviderName>;

/** 課稅別: taxed at 5 %, zero-rated (零稅率), exempt (免稅). */
export const EinvoiceTaxType = z.enum(['TAXED', 'ZERO_RATED', 'EXEMPT']);
export type EinvoiceTaxType = z.infer<typeof EinvoiceTaxType>;

const SellerTaxId = z
  .string()
  .max(8)
  .regex(/^[0-9]{8}$/, 'must be 8 digits (統一編號)')
  .describe(
    "The seller's 統一編號; its check digit is required in Production (providers' Sandbox test sellers, such as Amego's 12345678, fail it)",
  );

const endpointUrl = (site: string) =>
  z
    .url({ protocol: /^https?$/ })
    .max(500)
    .optional()
    .describe(`Sandbox only: where the provider's API answers (${site} by default, or an emulator)`);

const common = {
  seller_tax_id: SellerTaxId,
  tax_type: EinvoiceTaxType.optional().describe('The tax type of what is sold; TAXED by default'),
  donation_offered: z.boolean().optional().describe('Whether buyers may donate the invoice; true by default'),
};

export const ConfigureEinvoiceBody = z
  .discriminatedUnion('provider', [
    z.strictObject({ provider: z.literal('none') }),
    z.strictObject({
      provider: z.literal('ecpay'),
      merchant_id: z
        .string()
        .max(10)
        .regex(/^[0-9]{7,10}$/, 'must be the ECPay merchant id (7-10 digits)'),
      hash_key: z
        .string()
        .max(16)
        .regex(/^[\x21-\x7e]{16}$/, 'must be the 16 characters ECPay issued'),
      hash_iv: z
        .string()
        .max(16)
        .regex(/^[\x21-\x7e]{16}$/, 'must be the 16 characters ECPay issued'),
      endpoint_url: endpointUrl('einvoice-stage.ecpay.com.tw'),
      ...common,
    }),
    z.strictObject({
      provider: z.literal('amego'),
      app_key: z
        .string()
        .max(64)
        .regex(/^[\x21-\x7e]{8,64}$/, 'must be the App Key Amego issued'),
      endpoint_url: endpointUrl('invoice-api.amego.tw'),
      ...common,
    }),
  ])
  .meta({ id: 'ConfigureEinvoiceBody' });
export type ConfigureEinvoiceBody = z.infer<typeof ConfigureEinvoiceBody>;

export const EinvoiceSettings = z
  .object({
    object: z.literal('einvoice_settings'),
    organization_id: z.string(),
    environment: BillingSettingsEnvironment,
    provider: EinvoiceProviderName.describe('`none`: no e-invoice is issued'),
    enabled: z.boolean().describe('Whether an e-invoice is issued for every payment (checkout `einvoice_enabled`)'),
    merchant_id: z.string().nullable(),
    seller_tax_id: z.string().nullable(),
    tax_type: EinvoiceTaxType,
    donation_offered: z.boolean(),
    endpoint_url: z.string().nullable(),
    credentials_set: z.boolean().describe('Whether credentials are stored; they are never returned'),
    updated_at: timestamp.nullable().describe('null while never set'),
  })
  .meta({ id: 'EinvoiceSettings' });
export type EinvoiceSettings = z.infer<typeof EinvoiceSettings>;

export const EinvoiceStatus = z
  .enum(['pending', 'issued', 'voided'])
  .describe('pending: not issued yet (attempts and their errors show why); issued; voided (作廢) after a full refund');
export type EinvoiceStatus = z.infer<typeof EinvoiceStatus>;

export const EinvoiceAllowance = z
  .object({
    refund_id: z.string(),
    amount: z.int().min(1).describe('TWD, tax included'),
    status: z.enum(['pending', 'issued']),
    number: z.string().nullable().describe("The provider's allowance number (折讓單號)"),
    issued_at: timestamp.nullable(),
  })
  .meta({ id: 'EinvoiceAllowance' });
export type EinvoiceAllowance = z.infer<typeof EinvoiceAllowance>;

export const EinvoiceResource = z
  .object({
    object: z.literal('einvoice'),
    id: z.string().describe('Prefix einv_'),
    invoice_id: z.string().nullable().describe('The billing invoice it was issued for'),
    order_id: z
      .string()
      .nullable()
      .describe("The checkout order that paid for it: a one-time purchase's, or a subscription's first invoice's"),
    customer_id: z.string().nullable(),
    status: EinvoiceStatus,
    pending_action: z
      .enum(['issue', 'void', 'allowance'])
      .nullable()
      .describe('What is still to be asked of the provider (tried again at next_attempt_at); null when nothing'),
    provider: z.enum(['ecpay', 'amego']),
    merchant_order_number: z.string().describe("The provider's merchant order number: one e-invoice per number"),
    buyer: EinvoiceChoice.describe("The buyer's choice the e-invoice was issued with"),
    tax_type: EinvoiceTaxType,
    description: z.string().describe("The e-invoice's one line: what was sold"),
    currency: z.literal('TWD'),
    total: z.int().min(1).describe('TWD, tax included'),
    sales_amount: z.int().min(0).describe('B2B: the untaxed amount; otherwise the total'),
    tax_amount: z.int().min(0).describe('B2B taxed: total - sales_amount; otherwise 0'),
    number: z.string().nullable().describe('發票號碼: 2 letters and 8 digits, once issued'),
    random_code: z.string().nullable().describe('隨機碼: 4 digits, once issued'),
    issued_at: timestamp.nullable(),
    deadline: timestamp.describe('When the MOF must have it: 48 hours after payment (B2C), 7 days (B2B)'),
    deadline_warned_at: timestamp
      .nullable()
      .describe('When einvoice.deadline_approaching was sent for it (still not issued near its deadline)'),
    attempt_count: z.int().min(0),
    next_attempt_at: timestamp.nullable().describe('While pending: when it is tried again'),
    last_error: z.object({ code: z.string(), message: z.string() }).nullable(),
    voided_at: timestamp.nullable(),
    amount_allowanced: z.int().min(0).describe('TWD given back by allowances (折讓) issued so far'),
    allowances: z.array(EinvoiceAllowance),
    created_at: timestamp,
    updated_at: timestamp,
    livemode: z.boolean(),
  })
  .meta({ id: 'EinvoiceObject' });
export type EinvoiceResource = z.infer<typeof EinvoiceResource>;

export const EinvoiceList = cursorListEnvelope(EinvoiceResource).meta({ id: 'EinvoiceList' });

export const ListEinvoicesQuery = z
  .object({
    limit: limitParam(10, 100),
    starting_after: startingAfterParam('einvoice'),
    customer_id: idText().optional(),
    invoice_id: idText().optional(),
    order_id: idText().optional(),
    status: EinvoiceStatus.optional(),
    number: z
      .string()
      .max(10)
      .regex(/^[A-Z]{2}\d{8}$/, 'an e-invoice number is 2 capital letters and 8 digits, e.g. AB12345678')
      .optional()
      .describe('發票號碼: the issued e-invoice with this number'),
  })
  .meta({ id: 'ListEinvoicesQuery' });
export type ListEinvoicesQuery = z.infer<typeof ListEinvoicesQuery>;

export const EinvoiceIdParams = z.object({ id: idText().describe('E-invoice id, prefix einv_') });

const withObject = <T extends z.ZodRawShape>(shape: T) =>
  z.object({ einvoice_id: z.string(), ...Tenant, ...shape, object: EinvoiceResource });

/** Internal: a paid order or invoice asks for its e-invoice. */
export const EinvoiceRequestedData = withObject({
  contact: z
    .object({ email: z.string().nullable(), name: z.string().nullable() })
    .describe("The buyer's email and name, for the provider's notices"),
}).meta({ id: 'EinvoiceRequestedData' });
export type EinvoiceRequestedData = z.infer<typeof EinvoiceRequestedData>;
/** Internal: an attempt to issue, void or allowance was claimed by one billing process. */
export const EinvoiceAttemptStartedData = withObject({ attempt: z.int().min(1) }).meta({
  id: 'EinvoiceAttemptStartedData',
});
export type EinvoiceAttemptStartedData = z.infer<typeof EinvoiceAttemptStartedData>;
/** Occurs when the provider issued the e-invoice (public: einvoice.issued). */
export const EinvoiceIssuedData = withObject({}).meta({ id: 'EinvoiceIssuedData' });
export type EinvoiceIssuedData = z.infer<typeof EinvoiceIssuedData>;
/** Occurs when an attempt failed; it is tried again at `object.next_attempt_at` (public: einvoice.failed). */
export const EinvoiceAttemptFailedData = withObject({
  attempt: z.int().min(1),
  failure: z.object({ code: z.string(), message: z.string() }),
}).meta({ id: 'EinvoiceAttemptFailedData' });
export type EinvoiceAttemptFailedData = z.infer<typeof EinvoiceAttemptFailedData>;
/** Occurs once when an e-invoice is still not issued close to its deadline (public: einvoice.deadline_approaching). */
export const EinvoiceDeadlineApproachingData = withObject({}).meta({ id: 'EinvoiceDeadlineApproachingData' });
export type EinvoiceDeadlineApproachingData = z.infer<typeof EinvoiceDeadlineApproachingData>;
/** Internal: a refund asks for a void (`voids`) or an allowance of `amount`. */
export const EinvoiceRefundRecordedData = withObject({
  refund_id: z.string(),
  amount: z.int().min(1),
  voids: z.boolean(),
}).meta({
  id: 'EinvoiceRefundRecordedData',
});
export type EinvoiceRefundRecordedData = z.infer<typeof EinvoiceRefundRecordedData>;
/** Occurs when the e-invoice was voided after a full refund (public: einvoice.voided). */
export const EinvoiceVoidedData = withObject({}).meta({ id: 'EinvoiceVoidedData' });
export type EinvoiceVoidedData = z.infer<typeof EinvoiceVoidedData>;
/** Occurs when an allowance was issued for a refund (public: einvoice.allowance_issued). */
export const EinvoiceAllowanceIssuedData = withObject({ allowance: EinvoiceAllowance }).meta({
  id: 'EinvoiceAllowanceIssuedData',
});
export type EinvoiceAllowanceIssuedData = z.infer<typeof EinvoiceAllowanceIssuedData>;
/**
 * Internal: the organization's e-invoice settings for one environment were set (whole); the
 * credentials sealed, never in the clear. Checkout reads `object.enabled` for `einvoice_enabled`.
 */
export const EinvoiceSettingsConfiguredData = z
  .object({ ...Tenant, object: EinvoiceSettings, sealed_credentials: z.string().nullable() })
  .meta({ id: 'EinvoiceSettingsConfiguredData' });
export type EinvoiceSettingsConfiguredData = z.infer<typeof EinvoiceSettingsConfiguredData>;
/** Internal: the buyer's choice for a customer's later e-invoices (renewals), from a checkout or the portal. */
export const EinvoiceChoiceChangedData = z
  .object({ customer_id: z.string(), choice: EinvoiceChoice, changed_at: timestamp })
  .meta({ id: 'EinvoiceChoiceChangedData' });
export type EinvoiceChoiceChangedData = z.infer<typeof EinvoiceChoiceChangedData>;

export const EINVOICE_EVENT_SCHEMAS = {
  EinvoiceRequested: EinvoiceRequestedData,
  EinvoiceAttemptStarted: EinvoiceAttemptStartedData,
  EinvoiceIssued: EinvoiceIssuedData,
  EinvoiceAttemptFailed: EinvoiceAttemptFailedData,
  EinvoiceDeadlineApproaching: EinvoiceDeadlineApproachingData,
  EinvoiceRefundRecorded: EinvoiceRefundRecordedData,
  EinvoiceVoided: EinvoiceVoidedData,
  EinvoiceAllowanceIssued: EinvoiceAllowanceIssuedData,
  EinvoiceSettingsConfigured: EinvoiceSettingsConfiguredData,
  EinvoiceChoiceChanged: EinvoiceChoiceChangedData,
} as const;
