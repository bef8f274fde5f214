import { conflict, type CallerIdentity, type ReservedRedemption } from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import { dependenciesOf, serviceCaller } from '../dependencies';
import { isPayable } from './decide';
import { sessionAggregate } from './aggregate';
import type { Session } from './session';
import { releasePromotion, reservePromotion } from './upstream';

/** Decided on the stream; `replacing` makes a change another one overtook a 409 (not a silent overwrite). */
async function change(
  context: ServiceContext,
  session: Session,
  code: string | null,
  redemption: ReservedRedemption | null,
) {
  const { store, now } = context;
  const { state } = await sessionAggregate.handle(
    store,
    session.id,
    { type: 'ChangePromotion', data: { code, redemption, replacing: session.redemption_id, now: now() } },
    { organization: session.organization, environment: session.environment, occurredAt: now() },
  );
  if (state.status === 'Empty') throw new Error('checkout vanished');
  return state.session;
}

/** Released after the change is recorded; a release that fails leaves a hold the checkout's expiry frees. */
async function release(context: ServiceContext, session: Session, redemptionId: string | null) {
  if (!redemptionId) return;
  const caller = serviceCaller(session.organization, session.environment);
  await releasePromotion(dependenciesOf(context).promotions(), caller, redemptionId).catch((err: unknown) =>
    context.logger.warn({ err, session: session.id }, 'promotion hold not released'),
  );
}

/**
 * Applies a promotion code to an open checkout (an embedded checkout's coupon box, the hosted
 * page's field), as at creation: promotions reserves a redemption for this checkout (its
 * refusals are 422, masked for a Publishable Key), the checkout records the new amounts, and a
 * code applied before is released. A change made at the same time that came first is 409, and
 * this one's reservation is released.
 */
export async function applyPromotion(
  context: ServiceContext,
  caller: CallerIdentity,
  session: Session,
  code: string,
): Promise<Session> {
  if (!isPayable(session, context.now()) || session.charge) throw conflict('This checkout is paid or expired');
  const redemption = await reservePromotion(dependenciesOf(context).promotions(), caller, {
    code,
    amount: session.product.price,
    product_id: session.product.id,
    checkout_session_id: session.id,
    customer_id: session.customer_id ?? undefined,
    external_id: session.external_customer_id ?? undefined,
    email: session.customer_email ?? undefined,
  });
  if (redemption.redemption_id === session.redemption_id) return session;
  let changed: Session;
  try {
    // Codes are uppercase (promotions matches what the buyer typed without case): shown as the merchant wrote it.
    changed = await change(context, session, code.trim().toUpperCase(), redemption);
  } catch (error) {
    await release(context, session, redemption.redemption_id);
    throw error;
  }
  await release(context, session, session.redemption_id);
  return changed;
}

/** Removes the code of an open checkout: full price again, the redemption released. */
export async function removePromotion(context: ServiceContext, session: Session): Promise<Session> {
  const changed = await change(context, session, null, null);
  await release(context, session, session.redemption_id);
  return changed;
}
