import { IDENTITY_HEADERS } from '@billing/contracts';
import {
  type InternalCall,
  bodyHashOf,
  isSignedBody,
  signInternalCall,
  verifyInternalCall,
} from './internal-signature';

const SECRET = 'a-test-secret-that-is-long-enough-000';
const NOW = Date.parse('2026-03-01T00:00:00Z');
const caller = { organization: 'org_a', environment: 'SANDBOX', keyKind: 'secret', keyId: 'key_1' } as const;
const call: InternalCall = { scope: 'key', method: 'GET', path: '/v1/customers?limit=2', identity: caller };
const noBody = bodyHashOf(undefined);

const verify = (headers: Record<string, string | string[]>, overrides: Partial<InternalCall> = {}, now = NOW) =>
  verifyInternalCall(
    SECRET,
    { method: overrides.method ?? call.method, path: overrides.path ?? call.path, headers },
    now,
  );

describe('internal call signatures', () => {
  it('verifies what was signed, with the identity it carries', () => {
    expect(verify(signInternalCall(SECRET, call, NOW))).toEqual({
      ok: true,
      call: { scope: 'key', identity: caller, bodyHash: noBody },
    });
    const admin = signInternalCall(
      SECRET,
      { scope: 'admin', method: 'POST', path: '/admin/products', identity: { organization: 'org_a' } },
      NOW,
    );
    expect(verify(admin, { method: 'POST', path: '/admin/products' })).toEqual({
      ok: true,
      call: { scope: 'admin', organization: 'org_a', bodyHash: noBody },
    });
    const page = signInternalCall(SECRET, { scope: 'page', method: 'GET', path: '/checkout/cs_1' }, NOW);
    expect(verify(page, { path: '/checkout/cs_1' })).toEqual({ ok: true, call: { scope: 'page', bodyHash: noBody } });
  });

  it.each([
    ['organization', IDENTITY_HEADERS.organization, 'org_b'],
    ['environment', IDENTITY_HEADERS.environment, 'PRODUCTION'],
    ['key kind', IDENTITY_HEADERS.keyKind, 'publishable'],
    ['key id', IDENTITY_HEADERS.keyId, 'key_2'],
    ['scope', IDENTITY_HEADERS.scope, 'service'],
    ['timestamp', IDENTITY_HEADERS.timestamp, String(NOW + 1)],
    ['signature', IDENTITY_HEADERS.signature, `v1=${'0'.repeat(64)}`],
    ['body hash', IDENTITY_HEADERS.bodyHash, bodyHashOf('{"amount":999}')],
  ])('refuses a call with its %s changed', (_what, header, value) => {
    expect(verify({ ...signInternalCall(SECRET, call, NOW), [header]: value })).toMatchObject({ ok: false });
  });

  it('refuses another method, another path or query, and another secret', () => {
    const signed = signInternalCall(SECRET, call, NOW);
    expect(verify(signed, { method: 'POST' })).toMatchObject({ ok: false, reason: 'Invalid internal signature' });
    expect(verify(signed, { path: '/v1/customers?limit=3' })).toMatchObject({ ok: false });
    expect(verify(signInternalCall(`${SECRET}x`, call, NOW))).toMatchObject({ ok: false });
  });

  it('signs the body by its SHA-256: the body read must be the one signed, byte for byte', () => {
    const refund = { ...call, method: 'POST', path: '/v1/refunds', body: '{"order_id":"ord_1","amount":1}' };
    const verified = verify(signInternalCall(SECRET, refund, NOW), refund);
    expect(verified).toMatchObject({ ok: true, call: { bodyHash: bodyHashOf(refund.body) } });
    const signed = (verified as { call: { bodyHash: string } }).call;
    expect(isSignedBody(signed, Buffer.from(refund.body))).toBe(true);
    expect(isSignedBody(signed, '{"order_id":"ord_2","amount":999}')).toBe(false);
    expect(isSignedBody(signed, `${refund.body} `)).toBe(false);
    expect(isSignedBody(signed, '')).toBe(false);
    expect(isSignedBody({ bodyHash: noBody }, Buffer.alloc(0))).toBe(true);
  });

  it('accepts a minute either way of the clock, and refuses beyond', () => {
    const signed = signInternalCall(SECRET, call, NOW);
    expect(verify(signed, {}, NOW + 60_000)).toMatchObject({ ok: true });
    expect(verify(signed, {}, NOW - 60_000)).toMatchObject({ ok: true });
    expect(verify(signed, {}, NOW + 60_001)).toEqual({ ok: false, reason: 'Expired internal signature' });
    expect(verify(signed, {}, NOW - 60_001)).toEqual({ ok: false, reason: 'Expired internal signature' });
  });

  it('refuses missing or repeated headers, and a scope without what it needs', () => {
    const signed = signInternalCall(SECRET, call, NOW);
    const { [IDENTITY_HEADERS.signature]: _dropped, ...unsigned } = signed;
    expect(verify(unsigned)).toMatchObject({ ok: false, reason: expect.stringMatching(/^Missing internal signature/) });
    expect(
      verify({ ...signed, [IDENTITY_HEADERS.signature]: [signed[IDENTITY_HEADERS.signature]!, 'x'] }),
    ).toMatchObject({
      ok: false,
    });
    const noIdentity = signInternalCall(SECRET, { ...call, identity: undefined }, NOW);
    expect(verify(noIdentity)).toEqual({ ok: false, reason: 'Missing caller identity' });
    const adminWithout = signInternalCall(SECRET, { scope: 'admin', method: 'GET', path: '/admin/x' }, NOW);
    expect(verify(adminWithout, { path: '/admin/x' })).toEqual({ ok: false, reason: 'Missing organization' });
  });
});
