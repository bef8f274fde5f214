import { timingSafeEqual, createHash } from 'node:crypto';
import type { Request, Response } from 'express';
import { dummyHash, verifyPassword } from './passwords';
import { type DashboardStore, type Principal, type Session, newSecret } from './store';

export const SESSION_COOKIE = 'dashboard_session';
export const LOGIN_CSRF_COOKIE = 'dashboard_login_csrf';
export const SESSION_TTL_MS = 12 * 60 * 60_000;
/** Five wrong passwords (or admin tokens from one address) within 15 minutes lock it for 15 minutes. */
export const LOCKOUT = { limit: 5, windowMs: 15 * 60_000, lockMs: 15 * 60_000 };

/**
 * A cookie's value, or `undefined` when it is absent or cannot be decoded: a cookie is the
 * client's to write, so a malformed one is no cookie (a signed-out visitor), never an error.
 */
export function readCookie(req: Request, name: string): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return decodedOrUndefined(value.join('='));
  }
  return undefined;
}

function decodedOrUndefined(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

export function setCookie(req: Request, res: Response, name: string, value: string, maxAgeSeconds?: number): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, 'Path=/dashboard', 'HttpOnly', 'SameSite=Lax'];
  if (req.secure) parts.push('Secure');
  if (maxAgeSeconds !== undefined) parts.push(`Max-Age=${maxAgeSeconds}`);
  res.append('Set-Cookie', parts.join('; '));
}

/** The login form's CSRF token: a random cookie the form must echo (no session exists yet). */
export function loginCsrf(req: Request, res: Response): string {
  const existing = readCookie(req, LOGIN_CSRF_COOKIE);
  if (existing) return existing;
  const token = newSecret();
  setCookie(req, res, LOGIN_CSRF_COOKIE, token);
  return token;
}

export const sameToken = (a: string | undefined, b: string | undefined) => {
  if (!a || !b) return false;
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right);
};

export type SignIn = { ok: true; principal: Principal } | { ok: false; reason: 'invalid' | 'locked'; until?: Date };

/** Signs in by email and password, or by the admin token; failures count toward the lockout. */
export class Authenticator {
  constructor(
    private readonly store: DashboardStore,
    private readonly adminToken: string,
    private readonly now: () => Date,
  ) {}

  async withPassword(email: string, password: string): Promise<SignIn> {
    const principalKey = `user:${email.trim().toLowerCase()}`;
    const locked = await this.store.lockedUntil(principalKey, this.now());
    if (locked) return { ok: false, reason: 'locked', until: locked };
    const user = await this.store.userByEmail(email.trim().toLowerCase());
    const valid = await verifyPassword(password, user?.password_hash ?? (await dummyHash()));
    if (!user || !user.password_hash || !valid) return this.fail(principalKey);
    await this.store.clearFailures(principalKey);
    return { ok: true, principal: { kind: 'user', user } };
  }

  async withAdminToken(token: string, address: string): Promise<SignIn> {
    const principalKey = `operator:${address}`;
    const locked = await this.store.lockedUntil(principalKey, this.now());
    if (locked) return { ok: false, reason: 'locked', until: locked };
    if (!sameToken(token, this.adminToken)) return this.fail(principalKey);
    await this.store.clearFailures(principalKey);
    return { ok: true, principal: { kind: 'operator' } };
  }

  startSession(principal: Principal): Promise<{ token: string; session: Session }> {
    return this.store.createSession(principal, this.now(), SESSION_TTL_MS);
  }

  private async fail(principalKey: string): Promise<SignIn> {
    await this.store.recordFailure(principalKey, this.now(), LOCKOUT);
    const locked = await this.store.lockedUntil(principalKey, this.now());
    return locked ? { ok: false, reason: 'locked', until: locked } : { ok: false, reason: 'invalid' };
  }
}
