import {
  type CreatePortalSessionBody,
  type Customer,
  PORTAL_SESSION_LIMITS,
  type PortalConfiguration,
  type PortalSession,
  livemodeOf,
  newId,
  portalError,
} from '@billing/contracts';
import type { ServiceContext } from '@billing/runtime';
import type { Tenant } from '@billing/service';
import { findBuyer } from '../../customers/resolve';
import { defaultPortalConfiguration, findPortalConfiguration } from '../configurations/read-model';
import { DEFAULT_PORTAL_URL, portalPageUrl } from './capability';
import { portalSessionAggregate } from './aggregate';
import { type StoredPortalSession, activePortalSessions, findPortalSession } from './read-model';
import { statusAt } from './session';

/** The spec's resource of a stored session, its status at `now`, its URL built again from its id. */
export function toPortalSession(context: ServiceContext, stored: StoredPortalSession, now: Date): PortalSession {
  return {
    object: 'portal.session',
    id: stored.id,
    url: portalPageUrl(context.config.PORTAL_URL ?? DEFAULT_PORTAL_URL, context.internalSecret, stored.id),
    return_url: stored.return_url,
    customer_id: stored.customer_id,
    configuration_id: stored.configuration_id,
    locale: stored.locale,
    status: statusAt(stored, now),
    expires_at: stored.expires_at,
    accessed_at: stored.accessed_at,
    created_at: stored.created_at,
    livemode: livemodeOf(stored.environment),
  };
}

/** The named configuration, or the environment's default (none: the built-in features). */
async function configurationFor(context: ServiceContext, tenant: Tenant, id: string | undefined) {
  const { store } = context;
  if (id === undefined) return defaultPortalConfiguration(store.database, store.tables.schema, tenant);
  const found = await findPortalConfiguration(store.database, store.tables.schema, tenant, id);
  if (!found || !found.active) {
    throw portalError('invalid_param', `No such active portal configuration: ${id}`, [
      { path: 'configuration_id', message: 'names no active portal configuration', code: 'not_found' },
    ]);
  }
  return found;
}

function returnUrlFor(
  body: CreatePortalSessionBody,
  configuration: PortalConfiguration | undefined,
  fallback: string | undefined,
): string {
  const url = body.return_url ?? configuration?.default_return_url ?? fallback;
  if (!url) {
    throw portalError('missing_return_url', 'Give return_url, or set default_return_url in the portal configuration');
  }
  return url;
}

async function customerFor(context: ServiceContext, tenant: Tenant, body: CreatePortalSessionBody): Promise<Customer> {
  const customer = await findBuyer(context.store.database, context.store.tables.schema, tenant, body);
  if (!customer) throw portalError('customer_not_found', 'No customer matches customer_id, external_id or email');
  return customer;
}

export interface PortalSessionOptions {
  /** How long the session lives; the spec's hour when absent. */
  lifetimeMs?: number;
  /** Without a return URL in the body or the configuration, return to the portal's own page. */
  returnToPortal?: boolean;
}

/**
 * Opens a portal session: the customer by the spec's precedence (a name that matches nobody
 * gives way to the next), the configuration, the return URL; then keeps the customer's
 * active sessions to five, revoking the oldest.
 */
export async function createPortalSession(
  context: ServiceContext,
  tenant: Tenant,
  body: CreatePortalSessionBody,
  options: PortalSessionOptions = {},
): Promise<PortalSession> {
  const { store } = context;
  const { schema } = store.tables;
  if (body.customer_id === undefined && body.external_id === undefined && body.email === undefined) {
    throw portalError('invalid_param', 'Give at least one of customer_id, external_id, email', [
      { path: 'customer_id', message: 'one of customer_id, external_id, email is required', code: 'required' },
    ]);
  }
  const configuration = await configurationFor(context, tenant, body.configuration_id);
  const sessionId = newId('portalSession');
  const ownPage = portalPageUrl(context.config.PORTAL_URL ?? DEFAULT_PORTAL_URL, context.internalSecret, sessionId);
  const returnUrl = returnUrlFor(body, configuration, options.returnToPortal ? ownPage : undefined);
  const customer = await customerFor(context, tenant, body);
  const now = context.now();
  await portalSessionAggregate.handle(
    store,
    sessionId,
    {
      type: 'CreatePortalSession',
      data: {
        sessionId,
        ...tenant,
        customerId: customer.id,
        returnUrl,
        configurationId: configuration?.id ?? null,
        locale: body.locale ?? null,
        now,
        lifetimeMs: options.lifetimeMs,
      },
    },
    { ...tenant, occurredAt: now },
  );
  await revokeBeyondLimit(context, tenant, customer.id);
  const stored = await findPortalSession(store.database, schema, tenant, sessionId);
  return toPortalSession(context, stored!, now);
}

/**
 * Revokes all but the newest five active sessions. Run after each creation, by every creator:
 * concurrent creators each look after their own commit, so the last one to look sees them all
 * and the count comes back to five (revoking is idempotent).
 */
async function revokeBeyondLimit(context: ServiceContext, tenant: Tenant, customerId: string) {
  const { store } = context;
  const { schema } = store.tables;
  const now = context.now();
  const active = await activePortalSessions(store.database, schema, customerId, now);
  for (const sessionId of active.slice(PORTAL_SESSION_LIMITS.activePerCustomer)) {
    await portalSessionAggregate.handle(
      store,
      sessionId,
      { type: 'RevokePortalSession', data: { sessionId, now } },
      { ...tenant, occurredAt: now },
    );
  }
}
