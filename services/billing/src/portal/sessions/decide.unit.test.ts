import { deciderSpec } from '@billing/testing';
import { portalSessionAggregate } from './aggregate';
import type { PortalSessionCommand } from './decide';
import { type PortalSessionEvent, type PortalSessionFacts, statusAt } from './session';

const spec = deciderSpec(portalSessionAggregate);
const at = new Date('2026-11-23T05:00:00.000Z');
const later = (ms: number) => new Date(at.getTime() + ms);
const facts: PortalSessionFacts = {
  id: 'portal_session_1',
  customer_id: 'cus_1',
  return_url: 'https://shop.example/account',
  configuration_id: null,
  locale: 'zh-TW',
  created_at: at.toISOString(),
  expires_at: '2026-11-23T06:00:00.000Z',
  accessed_at: null,
  revoked_at: null,
};
const created: PortalSessionEvent = {
  type: 'PortalSessionCreated',
  data: { session_id: 'portal_session_1', organization: 'org_1', environment: 'SANDBOX', session: facts },
};
const create: PortalSessionCommand = {
  type: 'CreatePortalSession',
  data: {
    sessionId: 'portal_session_1',
    organization: 'org_1',
    environment: 'SANDBOX',
    customerId: 'cus_1',
    returnUrl: 'https://shop.example/account',
    configurationId: null,
    locale: 'zh-TW',
    now: at,
  },
};
const access = (ms: number): PortalSessionCommand => ({
  type: 'RecordPortalAccess',
  data: { sessionId: 'portal_session_1', now: later(ms) },
});
const accessed = (ms: number): PortalSessionEvent => ({
  type: 'PortalSessionAccessed',
  data: { session_id: 'portal_session_1', accessed_at: later(ms).toISOString() },
});
const revoke = (ms: number): PortalSessionCommand => ({
  type: 'RevokePortalSession',
  data: { sessionId: 'portal_session_1', now: later(ms) },
});
const revoked = (ms: number): PortalSessionEvent => ({
  type: 'PortalSessionRevoked',
  data: { session_id: 'portal_session_1', revoked_at: later(ms).toISOString(), reason: 'too_many_active_sessions' },
});

describe('PortalSession', () => {
  describe('when it does not exist', () => {
    it('is created, expiring one hour later', () => spec.given([]).when(create).then([created]));
    it('cannot record an access', () => spec.given([]).when(access(0)).thenThrows('No such portal session'));
    it("is created for an email's link expiring when its lifetime says", () =>
      spec
        .given([])
        .when({ ...create, data: { ...create.data, lifetimeMs: 7 * 24 * 3_600_000 } } as PortalSessionCommand)
        .then([
          {
            ...created,
            data: { ...created.data, session: { ...facts, expires_at: '2026-11-30T05:00:00.000Z' } },
          } as PortalSessionEvent,
        ]));
  });

  describe('when active', () => {
    it('cannot be created twice', () => spec.given([created]).when(create).thenThrows('exists already'));
    it('records the first access', () =>
      spec
        .given([created])
        .when(access(1000))
        .then([accessed(1000)]));
    it('counts accesses within a minute as one', () =>
      spec
        .given([created, accessed(1000)])
        .when(access(59_000))
        .then([]));
    it('records a later access as the last one', () =>
      spec
        .given([created, accessed(1000)])
        .when(access(120_000))
        .then([accessed(120_000)]));
    it('is revoked', () =>
      spec
        .given([created])
        .when(revoke(5000))
        .then([revoked(5000)]));
  });

  describe('when expired or revoked', () => {
    it('records no access after the hour', () => spec.given([created]).when(access(3_600_000)).then([]));
    it('records no access once revoked', () =>
      spec
        .given([created, revoked(10)])
        .when(access(20))
        .then([]));
    it('is not revoked twice', () =>
      spec
        .given([created, revoked(10)])
        .when(revoke(20))
        .then([]));
    it('is not revoked after expiry', () => spec.given([created]).when(revoke(3_600_000)).then([]));
  });

  describe('statusAt', () => {
    it('is active up to the last millisecond of the hour, then expired', () => {
      expect(statusAt(facts, later(3_599_999))).toBe('active');
      expect(statusAt(facts, later(3_600_000))).toBe('expired');
    });
    it('is revoked whatever the time', () =>
      expect(statusAt({ ...facts, revoked_at: at.toISOString() }, at)).toBe('revoked'));
  });
});
