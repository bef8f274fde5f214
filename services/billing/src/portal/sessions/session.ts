import type { Environment, PortalLocale, PortalSessionStatus } from '@billing/contracts';
import { streamEvents } from '@billing/eventstore';

export const portalSessionStream = (sessionId: string) => `portal_session-${sessionId}`;

/** What a portal session is, as its events fold it; `status` here is what was recorded, not time's. */
export type PortalSessionFacts = {
  id: string;
  customer_id: string;
  return_url: string;
  configuration_id: string | null;
  locale: PortalLocale | null;
  created_at: string;
  expires_at: string;
  accessed_at: string | null;
  revoked_at: string | null;
};

export type PortalSessionCreated = {
  type: 'PortalSessionCreated';
  data: { session_id: string; organization: string; environment: Environment; session: PortalSessionFacts };
};
export type PortalSessionAccessed = {
  type: 'PortalSessionAccessed';
  data: { session_id: string; accessed_at: string };
};
export type PortalSessionRevoked = {
  type: 'PortalSessionRevoked';
  data: { session_id: string; revoked_at: string; reason: 'too_many_active_sessions' };
};
export type PortalSessionEvent = PortalSessionCreated | PortalSessionAccessed | PortalSessionRevoked;

export const portalSessionEvents = streamEvents<PortalSessionEvent>({
  PortalSessionCreated: true,
  PortalSessionAccessed: true,
  PortalSessionRevoked: true,
});

export type PortalSessionState =
  | { status: 'Empty' }
  | { status: 'Existing'; organization: string; environment: Environment; session: PortalSessionFacts };

export const initialState = (): PortalSessionState => ({ status: 'Empty' });

export function evolve(state: PortalSessionState, event: PortalSessionEvent): PortalSessionState {
  switch (event.type) {
    case 'PortalSessionCreated': {
      const { organization, environment, session } = event.data;
      return { status: 'Existing', organization, environment, session };
    }
    case 'PortalSessionAccessed':
      if (state.status === 'Empty') return state;
      return { ...state, session: { ...state.session, accessed_at: event.data.accessed_at } };
    case 'PortalSessionRevoked':
      if (state.status === 'Empty') return state;
      return { ...state, session: { ...state.session, revoked_at: event.data.revoked_at } };
    default: {
      const _unknown: never = event;
      return state;
    }
  }
}

/** Revoked stays revoked; otherwise active until `expires_at` on the service's clock, then expired. */
export function statusAt(session: PortalSessionFacts, now: Date): PortalSessionStatus {
  if (session.revoked_at) return 'revoked';
  return now.getTime() < Date.parse(session.expires_at) ? 'active' : 'expired';
}
