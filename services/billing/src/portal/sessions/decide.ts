import { type Environment, PORTAL_SESSION_LIMITS, type PortalLocale, conflict, notFound } from '@billing/contracts';
import { type PortalSessionEvent, type PortalSessionState, statusAt } from './session';

/** The merchant opens a portal for a customer; it expires one hour after `now` (an email's link: `lifetimeMs`). */
export type CreatePortalSession = {
  type: 'CreatePortalSession';
  data: {
    sessionId: string;
    organization: string;
    environment: Environment;
    customerId: string;
    returnUrl: string;
    configurationId: string | null;
    locale: PortalLocale | null;
    now: Date;
    /** How long it lives; the spec's hour when absent. */
    lifetimeMs?: number;
  };
};

/** The customer opened the page: `accessed_at` is the last access. */
export type RecordPortalAccess = { type: 'RecordPortalAccess'; data: { sessionId: string; now: Date } };

/** A newer session took one of the customer's five places. */
export type RevokePortalSession = { type: 'RevokePortalSession'; data: { sessionId: string; now: Date } };

export type PortalSessionCommand = CreatePortalSession | RecordPortalAccess | RevokePortalSession;

/** Accesses closer together than this are one access: a page and its redirects do not each append. */
export const ACCESS_RESOLUTION_MS = 60_000;

export function decide(command: PortalSessionCommand, state: PortalSessionState): PortalSessionEvent[] {
  switch (command.type) {
    case 'CreatePortalSession':
      return create(command, state);
    case 'RecordPortalAccess':
      return recordAccess(command, state);
    case 'RevokePortalSession':
      return revoke(command, state);
    default: {
      const _exhaustive: never = command;
      throw new Error(`Unknown command ${(_exhaustive as { type: string }).type}`);
    }
  }
}

function create({ data }: CreatePortalSession, state: PortalSessionState): PortalSessionEvent[] {
  if (state.status !== 'Empty') throw conflict(`Portal session ${data.sessionId} exists already`);
  const createdAt = data.now.toISOString();
  return [
    {
      type: 'PortalSessionCreated',
      data: {
        session_id: data.sessionId,
        organization: data.organization,
        environment: data.environment,
        session: {
          id: data.sessionId,
          customer_id: data.customerId,
          return_url: data.returnUrl,
          configuration_id: data.configurationId,
          locale: data.locale,
          created_at: createdAt,
          expires_at: new Date(
            data.now.getTime() + (data.lifetimeMs ?? PORTAL_SESSION_LIMITS.lifetimeMs),
          ).toISOString(),
          accessed_at: null,
          revoked_at: null,
        },
      },
    },
  ];
}

/** Only an active session records access; an access within a minute of the last one is the same. */
function recordAccess({ data }: RecordPortalAccess, state: PortalSessionState): PortalSessionEvent[] {
  if (state.status === 'Empty') throw notFound(`No such portal session: ${data.sessionId}`);
  const { session } = state;
  if (statusAt(session, data.now) !== 'active') return [];
  if (session.accessed_at && data.now.getTime() - Date.parse(session.accessed_at) < ACCESS_RESOLUTION_MS) return [];
  return [{ type: 'PortalSessionAccessed', data: { session_id: session.id, accessed_at: data.now.toISOString() } }];
}

/** Idempotent: a session revoked or expired already stays as it is. */
function revoke({ data }: RevokePortalSession, state: PortalSessionState): PortalSessionEvent[] {
  if (state.status === 'Empty') throw notFound(`No such portal session: ${data.sessionId}`);
  if (statusAt(state.session, data.now) !== 'active') return [];
  return [
    {
      type: 'PortalSessionRevoked',
      data: { session_id: data.sessionId, revoked_at: data.now.toISOString(), reason: 'too_many_active_sessions' },
    },
  ];
}
