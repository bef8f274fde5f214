import {
  DEFAULT_PORTAL_FEATURES,
  type PortalBusinessProfile,
  type PortalLocale,
  type Subscription,
} from '@billing/contracts';
import { type ServiceContext, findMerchant } from '@billing/runtime';
import type { Request, Response } from 'express';
import { findSubscription } from '../../subscriptions/queries';
import { findPortalConfiguration } from '../configurations/read-model';
import { accessTokenOf, csrfTokenOf, sameToken } from '../sessions/capability';
import { portalSessionAggregate } from '../sessions/aggregate';
import { type StoredPortalSession, findPortalSession } from '../sessions/read-model';
import { statusAt } from '../sessions/session';
import { localeFor, messagesFor } from './i18n';
import type { OpenPortal } from './open-portal';
import { renderMessagePage } from './render';

const NO_PROFILE: PortalBusinessProfile = { name: null, privacy_policy_url: null, terms_of_service_url: null };

/**
 * The configuration the session was opened with; the built-in features when none was. A profile
 * without a name shows the organization's, as the checkout pages do.
 */
async function settingsOf(context: ServiceContext, session: StoredPortalSession) {
  const { store } = context;
  const found = session.configuration_id
    ? await findPortalConfiguration(store.database, store.tables.schema, session, session.configuration_id)
    : undefined;
  const profile = found?.business_profile ?? NO_PROFILE;
  const merchant = profile.name ? null : await findMerchant(store.database, store.tables.schema, session.organization);
  return {
    features: found?.features ?? DEFAULT_PORTAL_FEATURES,
    businessProfile: merchant ? { ...profile, name: merchant.name } : profile,
  };
}

function refuse(
  res: Response,
  status: number,
  locale: PortalLocale,
  kind: 'invalid' | 'expired' | 'forbidden',
  back?: string,
  businessName?: string | null,
) {
  const t = messagesFor(locale);
  const [title, message] =
    kind === 'invalid'
      ? [t.invalidTitle, t.invalidMessage]
      : kind === 'expired'
        ? [t.expiredTitle, t.expiredMessage]
        : [t.forbiddenTitle, t.forbiddenMessage];
  res
    .status(status)
    .type('html')
    .send(
      renderMessagePage({
        locale,
        title,
        message,
        businessName,
        back: back ? { href: back, text: t.back } : undefined,
      }),
    );
}

/**
 * Opens the portal for a request: the token in the URL must be the session's, the session
 * active on the service's clock (else the expired page with the link back), and a POST must
 * carry the session's CSRF token. Records the access. Null when a refusal page was sent.
 */
export async function openPortal(context: ServiceContext, req: Request, res: Response): Promise<OpenPortal | null> {
  const { store } = context;
  const sessionId = String(req.params.session_id);
  const token = String(req.params.token);
  const guessedLocale = localeFor(null, req.get('accept-language'));
  const session = sameToken(token, accessTokenOf(context.internalSecret, sessionId))
    ? await findPortalSession(store.database, store.tables.schema, null, sessionId)
    : undefined;
  if (!session) {
    refuse(res, 404, guessedLocale, 'invalid');
    return null;
  }
  const locale = localeFor(session.locale, req.get('accept-language'));
  const now = context.now();
  const settings = await settingsOf(context, session);
  if (statusAt(session, now) !== 'active') {
    refuse(res, 410, locale, 'expired', session.return_url, settings.businessProfile.name);
    return null;
  }
  const csrfToken = csrfTokenOf(context.internalSecret, sessionId);
  if (req.method === 'POST' && !sameToken((req.body as Record<string, unknown> | undefined)?.csrf_token, csrfToken)) {
    refuse(res, 403, locale, 'forbidden', `/portal/${sessionId}/${token}`, settings.businessProfile.name);
    return null;
  }
  await portalSessionAggregate.handle(
    store,
    sessionId,
    { type: 'RecordPortalAccess', data: { sessionId, now } },
    { organization: session.organization, environment: session.environment, occurredAt: now },
  );
  return {
    session,
    tenant: { organization: session.organization, environment: session.environment },
    locale,
    t: messagesFor(locale),
    csrfToken,
    base: `/portal/${sessionId}/${token}`,
    ...settings,
    livemode: session.environment === 'PRODUCTION',
  };
}

/** The customer's own subscription named in the path; another's is as absent. */
export async function ownSubscription(
  context: ServiceContext,
  portal: OpenPortal,
  id: string,
): Promise<Subscription | undefined> {
  const { store } = context;
  const found = await findSubscription(store.database, store.tables.schema, portal.tenant, id);
  return found && found.customer_id === portal.session.customer_id ? found : undefined;
}
