import { z } from 'zod';
import type { Environment } from '../events/envelope';

/**
 * An organization's billing settings for one environment (after Stripe's subscription
 * settings), read and changed through the admin API (docs/billing-settings.md).
 */

/** What happens to a subscription when the last scheduled retry of its invoice fails. */
export const AfterFinalFailure = z.enum(['cancel', 'past_due']);
export type AfterFinalFailure = z.infer<typeof AfterFinalFailure>;
/** An upgrade's price difference: an invoice for the rest of the period now, or on the next renewal. */
export const UpgradeProration = z.enum(['prorate_now', 'bill_at_next_renewal']);
/** A downgrade: at the end of the paid period, or now with the unused part credited. */
export const DowngradeProration = z.enum(['at_period_end', 'now_with_credit']);

export const MAX_RETRY_DAYS = 60;
export const MAX_RETRIES = 8;

/** Days after the first failed attempt: 1 to 8 strictly increasing positive integers, at most 60. */
export const RetryDays = z
  .array(z.number().int().min(1).max(MAX_RETRY_DAYS))
  .min(1)
  .max(MAX_RETRIES)
  .refine((days) => days.every((day, i) => i === 0 || day > days[i - 1]!), {
    message: 'retry_days must be strictly increasing',
  });

export const MAX_LOW_BALANCE_THRESHOLD = 1_000_000_000;

/** Credits below which `credits.low_balance` is sent: a whole number from 1; null is off. */
export const LowBalanceThreshold = z.int().min(1).max(MAX_LOW_BALANCE_THRESHOLD).nullable();

export const MAX_OVERDRAFT_LIMIT = 1_000_000_000;

/** Credits a balance may go below zero by through spends: a whole number from 0 (no overdraft). */
export const OverdraftLimit = z.int().min(0).max(MAX_OVERDRAFT_LIMIT);

export const BillingSettingsEnvironment = z.enum(['sandbox', 'production']);
export type BillingSettingsEnvironment = z.infer<typeof BillingSettingsEnvironment>;

export const BillingSettings = z
  .object({
    object: z.literal('billing_settings'),
    organization_id: z.string(),
    environment: BillingSettingsEnvironment,
    dunning: z.object({
      retry_days: z.array(z.number().int()).describe('Days after the first failed attempt that retries run'),
      after_final_failure: AfterFinalFailure,
    }),
    proration: z.object({ upgrade: UpgradeProration, downgrade: DowngradeProration }),
    credits_low_balance_threshold: z
      .int()
      .nullable()
      .describe('credits.low_balance is sent when a change takes a balance from at or above it to below; null: off'),
    credits_overdraft_limit: z
      .int()
      .describe('spends may take a credit balance down to minus this many credits; 0: never below zero'),
    updated_at: z.iso.datetime().nullable().describe('null while the defaults were never changed'),
  })
  .meta({ id: 'BillingSettings' });
export type BillingSettings = z.infer<typeof BillingSettings>;

/** The part of the settings a PATCH changes: every field optional, unknown fields refused. */
export const UpdateBillingSettingsBody = z
  .strictObject({
    dunning: z
      .strictObject({ retry_days: RetryDays.optional(), after_final_failure: AfterFinalFailure.optional() })
      .optional(),
    proration: z
      .strictObject({ upgrade: UpgradeProration.optional(), downgrade: DowngradeProration.optional() })
      .optional(),
    credits_low_balance_threshold: LowBalanceThreshold.optional(),
    credits_overdraft_limit: OverdraftLimit.optional(),
  })
  .meta({ id: 'UpdateBillingSettingsBody' });
export type UpdateBillingSettingsBody = z.infer<typeof UpdateBillingSettingsBody>;

/** `?environment=sandbox|production` (either case), required. */
export const BillingSettingsQuery = z.object({
  environment: z
    .string()
    .max(16)
    .transform((value) => value.toLowerCase())
    .pipe(BillingSettingsEnvironment),
});

export const environmentOfSettings = (environment: BillingSettingsEnvironment): Environment =>
  environment === 'production' ? 'PRODUCTION' : 'SANDBOX';
export const settingsEnvironmentOf = (environment: Environment): BillingSettingsEnvironment =>
  environment === 'PRODUCTION' ? 'production' : 'sandbox';

/** What an organization has until it changes something. */
export function defaultBillingSettings(organization: string, environment: Environment): BillingSettings {
  return {
    object: 'billing_settings',
    organization_id: organization,
    environment: settingsEnvironmentOf(environment),
    dunning: { retry_days: [3, 5, 7], after_final_failure: 'cancel' },
    proration: { upgrade: 'prorate_now', downgrade: 'at_period_end' },
    credits_low_balance_threshold: null,
    credits_overdraft_limit: 0,
    updated_at: null,
  };
}
