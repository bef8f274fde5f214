import { WEBHOOK_EVENT_RETENTION_DAYS } from '@billing/contracts';
import { type ServiceContext, positiveNumberSetting, startPeriodic } from '@billing/runtime';
import { prunePublicEvents } from './read-model';

const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_EVENT_PRUNE_INTERVAL_MS = 60 * 60 * 1000;

/**
 * Deletes the stored public events received more than `WEBHOOK_EVENT_RETENTION_DAYS` ago by the
 * service's clock, every `WEBHOOK_EVENTS_PRUNE_INTERVAL_MS` (default an hour). Counted from
 * receipt, not from the event's `created_at`: a Sandbox test clock's events carry its time,
 * which may be months before or after the real one.
 */
export function startEventPruning(context: ServiceContext): () => Promise<void> {
  const { store, now, logger, config } = context;
  const intervalMs = positiveNumberSetting(config, 'WEBHOOK_EVENTS_PRUNE_INTERVAL_MS', DEFAULT_EVENT_PRUNE_INTERVAL_MS);
  return startPeriodic(async () => {
    const before = new Date(now().getTime() - WEBHOOK_EVENT_RETENTION_DAYS * DAY_MS);
    try {
      const deleted = await prunePublicEvents(store.database, store.tables.schema, before);
      if (deleted > 0) logger.info({ deleted, before: before.toISOString() }, 'pruned stored public events');
    } catch (err) {
      logger.error({ err }, 'pruning stored public events failed; the next run tries again');
    }
  }, intervalMs);
}
