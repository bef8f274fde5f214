import { handleCommand } from '@billing/eventstore';
import { type ServiceContext, startPeriodic } from '@billing/runtime';
import { dependenciesOf, serviceCaller } from '../dependencies';
import { findDueSessions } from './queries';
import { sessionAggregate, sessionProjector } from './routes';
import { sessionStream } from './session';
import { releasePromotion } from './upstream';

/**
 * Expires every OPEN session past `expires_at` on the service clock: appends
 * `CheckoutSessionExpired` (relayed to `checkout.events`) and releases its promotion
 * reservation. Safe to run concurrently and repeatedly: the decider ignores sessions that are
 * no longer OPEN. Returns the ids it expired.
 */
export async function expireDueSessions(context: ServiceContext): Promise<string[]> {
  const { store, now, logger } = context;
  const { schema } = store.tables;
  const deps = dependenciesOf(context);
  const expired: string[] = [];
  for (const { id, organization, environment } of await findDueSessions(store.database, schema, now())) {
    const at = now();
    try {
      const { state, events } = await handleCommand(
        store,
        sessionStream(id),
        sessionAggregate,
        { type: 'ExpireSession', data: { now: at } },
        { organization, environment, occurredAt: at, project: sessionProjector(schema) },
      );
      if (events.length === 0 || state.status === 'Empty') continue;
      expired.push(id);
      const { redemption_id } = state.session;
      if (redemption_id) {
        await releasePromotion(deps.promotions(), serviceCaller(organization, environment), redemption_id).catch(
          (err: unknown) => logger.warn({ err, id }, 'release failed; promotions releases on CheckoutSessionExpired'),
        );
      }
    } catch (err) {
      logger.error({ err, id }, 'expiring a checkout session failed; next sweep retries');
    }
  }
  return expired;
}

/** The background sweep: every `CHECKOUT_SWEEP_INTERVAL_MS` (default 30 s). */
export function startExpirySweep(context: ServiceContext): () => Promise<void> {
  return startPeriodic(() => expireDueSessions(context), dependenciesOf(context).sweepIntervalMs);
}
