import { z } from 'zod';
import { BillingSettingsEnvironment } from '../billing/billing-settings';

/**
 * Which payment processor takes an organization's payments in one environment, and its
 * credentials (docs/payments.md). Sandbox uses the built-in simulator until set; Production
 * takes no payment until set. Credentials are written, never read back.
 */

/** What a buyer can pay with through a processor: a card, an ATM virtual account (虛擬帳號), a convenience-store code (超商代碼). */
export const PaymentMethodKind = z.enum(['card', 'atm', 'cvs']);
export type PaymentMethodKind = z.infer<typeof PaymentMethodKind>;

/** ECPay merchant ids are digits; its AIO HashKey and HashIV are 16 letters and digits each. */
const ecpayKey = z
  .string()
  .max(16)
  .regex(/^[A-Za-z0-9]{16}$/, 'must be the 16 letters and digits ECPay issued');

/** PAYUNi's HashKey (32) and HashIV (16): printable characters, as its merchant site shows them. */
const payuniKey = (length: number) =>
  z
    .string()
    .max(length)
    .regex(new RegExp(`^[\\x21-\\x7e]{${length}}$`), `must be the ${length} characters PAYUNi issued`);

export const ConfigurePaymentProcessorBody = z
  .discriminatedUnion('processor', [
    z.strictObject({ processor: z.literal('sandbox') }),
    z.strictObject({
      processor: z.literal('ecpay'),
      merchant_id: z
        .string()
        .max(10)
        .regex(/^[0-9]{7,10}$/, 'must be the ECPay merchant id (7-10 digits)'),
      hash_key: ecpayKey,
      hash_iv: ecpayKey,
      endpoint_url: z
        .url({ protocol: /^https?$/ })
        .max(500)
        .optional()
        .describe(
          "Sandbox only: where ECPay's API answers (its staging site by default, or an emulator); Production always uses payment.ecpay.com.tw",
        ),
      methods: z
        .array(PaymentMethodKind)
        .min(1)
        .max(3)
        .refine((methods) => new Set(methods).size === methods.length, { message: 'methods must not repeat' })
        .optional()
        .describe('What buyers may pay with; all three by default'),
    }),
    z.strictObject({
      processor: z.literal('payuni'),
      merchant_id: z
        .string()
        .max(20)
        .regex(/^[A-Za-z0-9]{5,20}$/, 'must be the PAYUNi merchant id (MerID: 5-20 letters and digits)'),
      hash_key: payuniKey(32),
      hash_iv: payuniKey(16),
      endpoint_url: z
        .url({ protocol: /^https?$/ })
        .max(500)
        .optional()
        .describe(
          "Sandbox only: where PAYUNi's API answers (sandbox-api.payuni.com.tw by default, or an emulator, which also serves the card-field script); Production always uses api.payuni.com.tw",
        ),
      methods: z
        .array(PaymentMethodKind)
        .min(1)
        .max(3)
        .refine((methods) => new Set(methods).size === methods.length, { message: 'methods must not repeat' })
        .refine((methods) => methods.includes('card'), {
          message: 'PAYUNi takes cards on every checkout: include card',
        })
        .optional()
        .describe(
          'What buyers may pay with; all three by default, card always. ATM and convenience-store codes are offered for one-time checkouts (docs/payments.md)',
        ),
    }),
  ])
  .meta({ id: 'ConfigurePaymentProcessorBody' });
export type ConfigurePaymentProcessorBody = z.infer<typeof ConfigurePaymentProcessorBody>;

export const PaymentProcessorName = z.enum(['none', 'sandbox', 'ecpay', 'payuni']);
export type PaymentProcessorName = z.infer<typeof PaymentProcessorName>;

export const PaymentProcessorSettings = z
  .object({
    object: z.literal('payment_processor'),
    organization_id: z.string(),
    environment: BillingSettingsEnvironment,
    processor: PaymentProcessorName.describe('`none`: Production before a processor is set (every payment refused)'),
    merchant_id: z.string().nullable(),
    endpoint_url: z.string().nullable(),
    methods: z.array(PaymentMethodKind),
    credentials_set: z.boolean().describe('Whether credentials are stored; they are never returned'),
    updated_at: z.iso.datetime().nullable().describe('null while never set'),
  })
  .meta({ id: 'PaymentProcessorSettings' });
export type PaymentProcessorSettings = z.infer<typeof PaymentProcessorSettings>;
