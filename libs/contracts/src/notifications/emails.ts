import { z } from 'zod';
import { Environment } from '../events/envelope';
import { cursorListEnvelope } from '../shared/list';
import { idText } from '../shared/text';

/** The emails buyers get, each switched on or off per organization and environment. */
export const EMAIL_KINDS = [
  'receipt',
  'payment_failed',
  'trial_will_end',
  'renewal_upcoming',
  'subscription_canceled',
  'refund',
  'payment_instructions',
  'payment_reminder',
] as const;
export const EmailKind = z.enum(EMAIL_KINDS).meta({ id: 'EmailKind' });
export type EmailKind = z.infer<typeof EmailKind>;

export const EmailStatus = z
  .enum(['QUEUED', 'SENDING', 'SENT', 'KEPT', 'FAILED', 'SKIPPED', 'INTERRUPTED'])
  .describe(
    'SENT: the SMTP server accepted it; KEPT: in the mailbox only (Sandbox, or no SMTP); INTERRUPTED: its sender stopped before SMTP answered, so it may have gone out and is never sent again on its own',
  )
  .meta({ id: 'EmailStatus' });

export const Email = z
  .object({
    object: z.literal('email'),
    id: z.string().describe('Prefix eml_'),
    kind: EmailKind,
    status: EmailStatus,
    to: z.string().nullable(),
    locale: z.enum(['zh-TW', 'en']).nullable(),
    subject: z.string().nullable().describe('Null until written (at its first attempt)'),
    text: z.string().nullable(),
    html: z.string().nullable(),
    event_id: z.string().describe('The event it was written for; one email per event and kind'),
    customer_id: z.string().nullable(),
    attempts: z.int().min(0),
    error: z.string().nullable(),
    created_at: z.iso.datetime(),
    sent_at: z.iso.datetime().nullable(),
    livemode: z.boolean(),
  })
  .meta({ id: 'Email' });

export const EmailList = cursorListEnvelope(Email)
  .extend({ next_cursor: z.string().nullable() })
  .meta({ id: 'EmailList' });

export const MailboxQuery = z
  .strictObject({
    environment: Environment,
    limit: z.coerce.number().int().min(1).max(100).default(20),
    starting_after: idText().optional().describe('An email id (eml_): the page after it'),
  })
  .meta({ id: 'MailboxQuery' });

export const EmailSettingsQuery = z.strictObject({ environment: Environment }).meta({ id: 'EmailSettingsQuery' });

const kindSwitches = <T extends z.ZodType>(schema: T) =>
  Object.fromEntries(EMAIL_KINDS.map((kind) => [kind, schema])) as Record<EmailKind, T>;

export const EmailSettings = z
  .object({
    object: z.literal('email_settings'),
    environment: Environment,
    ...kindSwitches(z.boolean()),
  })
  .meta({ id: 'EmailSettings' });

export const UpdateEmailSettingsBody = z
  .strictObject({
    environment: Environment,
    ...kindSwitches(z.boolean().optional()),
  })
  .meta({ id: 'UpdateEmailSettingsBody' });
