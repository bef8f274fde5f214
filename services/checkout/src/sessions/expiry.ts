import { type ServiceContext, startPeriodic } from '@billing/runtime';
import { dependenciesOf, serviceCaller } from '../dependencies';
import { completeCharged, recordProcessorCharge } from './pay';
import { awaitLostEcpayCode, ecpayChargeOf } from './pay-ecpay';
import { payuniChargeOf } from './pay-payuni';
import { findChargedOpenSessions, findDueSessions, findSession } from './queries';
import { sessionAggregate } from './aggregate';
import type { Session } from './session';
import { releasePromotion } from './upstream';

/**
 * Expires every OPEN session past `expires_at` on the service clock: appends
 * `CheckoutSessionExpired` (relayed to `checkout.events`) and releases its promotion
 * reservation. Safe to run concurrently and repeatedly: the decider ignores sessions that are
 * no longer OPEN. Returns the ids it expired.
 *
 * Money first (docs/decisions/0006-one-charge-per-session.md): a session that was charged is
 * completed instead, due or not; one whose last charge has no recorded outcome is expired only
 * after the processor said it never charged that key, and completed if it did.
 */
export async function expireDueSessions(context: ServiceContext): Promise<string[]> {
  const { store, now, logger } = context;
  const { schema } = store.tables;
  const deps = dependenciesOf(context);
  await completeChargedSessions(context);
  const expired: string[] = [];
  for (const { id, organization, environment } of await findDueSessions(store.database, schema, now())) {
    const at = now();
    try {
      const session = await findSession(store.database, schema, id);
      if (!session) continue;
      const unchargedKey = await settlePendingCharge(context, session);
      if (unchargedKey === 'kept') continue;
      const { state, events } = await sessionAggregate.handle(
        store,
        id,
        { type: 'ExpireSession', data: { now: at, unchargedKey } },
        { organization, environment, occurredAt: at },
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

/** Completes OPEN sessions with a recorded charge whose completion failed; each is retried next sweep. */
async function completeChargedSessions(context: ServiceContext): Promise<void> {
  const { store, logger } = context;
  for (const id of await findChargedOpenSessions(store.database, store.tables.schema)) {
    const session = await findSession(store.database, store.tables.schema, id);
    if (!session) continue;
    await completeCharged(context, session).catch((err: unknown) =>
      logger.error({ err, id }, 'completing a charged checkout session failed; next sweep retries'),
    );
  }
}

/**
 * For a session whose last charge has no recorded outcome: asks the processor about its key.
 * Charged: records the charge and completes the session (`'kept'`); an ECPay code issued whose
 * post was lost: records it, and the session waits for it (`'kept'`). Never charged: the key,
 * which lets the session expire. Nothing pending: undefined.
 */
async function settlePendingCharge(context: ServiceContext, session: Session): Promise<string | 'kept' | undefined> {
  const pending = session.pending_charge;
  if (!pending || session.charge) return undefined;
  const externalChargeOf = pending.processor === 'ecpay' ? ecpayChargeOf : payuniChargeOf;
  const charged = pending.processor ? await externalChargeOf(context, session, pending.key) : undefined;
  const answer =
    charged !== undefined
      ? charged && { status: 'succeeded' as const, payment_method: charged.paymentMethod }
      : await dependenciesOf(context).processor.lookup(pending.key);
  // A code ECPay issued whose post was lost: the session waits for it instead of expiring.
  if (answer?.status !== 'succeeded') return (await awaitLostEcpayCode(context, session)) ? 'kept' : pending.key;
  context.logger.warn({ id: session.id, key: pending.key }, 'found an unrecorded charge; completing the session');
  await recordProcessorCharge(context, session, answer.payment_method);
  return 'kept';
}

/** The background sweep: every `CHECKOUT_SWEEP_INTERVAL_MS` (default 30 s). */
export function startExpirySweep(context: ServiceContext): () => Promise<void> {
  return startPeriodic(() => expireDueSessions(context), dependenciesOf(context).sweepIntervalMs);
}
