import { z } from 'zod';
import { Actor } from '../shared/actors';
import { Environment } from '../events/envelope';
import { limitParam } from '../shared/list';
import { idText } from '../shared/text';

/**
 * The records whose history the admin API shows (docs/dashboard-api.md), by id prefix: which
 * service owns each, and its stream (`<stream>-<id>`). Longer prefixes come first, since
 * `portal_session_` and `sub_sched_` would also match shorter ones.
 */
export const RECORD_STREAMS = [
  { prefix: 'portal_session_', service: 'billing', stream: 'portal_session' },
  { prefix: 'clock_', service: 'billing', stream: 'test_clock' },
  { prefix: 'prod_', service: 'catalog', stream: 'product' },
  { prefix: 'cus_', service: 'billing', stream: 'customer' },
  { prefix: 'sub_', service: 'billing', stream: 'subscription' },
  { prefix: 'bpc_', service: 'billing', stream: 'portal_configuration' },
  { prefix: 'in_', service: 'billing', stream: 'invoice' },
  { prefix: 'cs_', service: 'checkout', stream: 'checkout_session' },
  { prefix: 'plink_', service: 'checkout', stream: 'payment_link' },
  { prefix: 'cpn_', service: 'promotions', stream: 'coupon' },
  { prefix: 'promo_', service: 'promotions', stream: 'promotion_code' },
  { prefix: 'whd_', service: 'notifications', stream: 'webhook_delivery' },
  { prefix: 'wh_', service: 'notifications', stream: 'webhook_endpoint' },
] as const;
export type RecordStream = (typeof RECORD_STREAMS)[number];

/** The entry for an id, when its prefix is known and the rest is an id's base62 part. */
export function recordStreamOf(recordId: string): RecordStream | undefined {
  const entry = RECORD_STREAMS.find((candidate) => recordId.startsWith(candidate.prefix));
  if (!entry || !/^[0-9A-Za-z]{1,128}$/.test(recordId.slice(entry.prefix.length))) return undefined;
  // A subscription schedule (`sub_sched_`) is no subscription.
  if (entry.prefix === 'sub_' && recordId.startsWith('sub_sched_')) return undefined;
  return entry;
}

export const RecordHistoryQuery = z
  .object({
    record_id: idText()
      .min(1)
      .refine((id) => recordStreamOf(id) !== undefined, {
        message: `Give the id of a record: ${RECORD_STREAMS.map((entry) => entry.prefix).join(', ')}...`,
      })
      .describe('The id of a record: customer, subscription, invoice, product, coupon, ...'),
    environment: Environment,
    limit: limitParam(20),
    starting_after: z.coerce.number().int().min(0).optional().describe('The last `version` of the previous page'),
  })
  .meta({ id: 'RecordHistoryQuery' });
export type RecordHistoryQuery = z.infer<typeof RecordHistoryQuery>;

export const RecordEvent = z
  .object({
    object: z.literal('record_event'),
    version: z.int().min(1).describe("Position in the record's stream, from 1"),
    type: z.string(),
    occurred_at: z.iso.datetime(),
    actor: Actor,
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'RecordEvent' });

export const RecordHistory = z
  .object({
    object: z.literal('list'),
    record_id: z.string(),
    data: z.array(RecordEvent),
    has_more: z.boolean(),
  })
  .meta({ id: 'RecordHistory' });
export type RecordHistory = z.infer<typeof RecordHistory>;
