import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { type CallerIdentity, type Environment, notFound } from '@billing/contracts';
import type { Request, RequestHandler } from 'express';

/**
 * The dashboard's pages call the gateway's own /v1 and /admin/v1 routes over loopback, so every
 * action passes the same routing, limits, idempotency and authorization as an API call. Each
 * call carries a credential signed with a key that never leaves this process; the hook below
 * turns it into the caller identity an API key would give, and the actor the events record.
 */
export const DASHBOARD_CREDENTIAL_HEADER = 'x-dashboard-credential';

export type DashboardActor = { type: 'dashboard_user'; id: string } | { type: 'admin' };

export interface DashboardCredential {
  /** The organization the call may touch; absent for the operator's organization-wide calls. */
  organization?: string;
  environment?: Environment;
  actor: DashboardActor;
  /** Milliseconds since the epoch (process time): credentials live for seconds. */
  expires: number;
}

const LIFETIME_MS = 60_000;

export class CredentialSigner {
  private readonly key = randomBytes(32);

  sign(credential: Omit<DashboardCredential, 'expires'>): string {
    const body = Buffer.from(JSON.stringify({ ...credential, expires: Date.now() + LIFETIME_MS })).toString(
      'base64url',
    );
    return `${body}.${this.mac(body)}`;
  }

  verify(value: string): DashboardCredential | undefined {
    const [body, mac] = value.split('.');
    if (!body || !mac) return undefined;
    const expected = Buffer.from(this.mac(body));
    const given = Buffer.from(mac);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return undefined;
    const credential = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as DashboardCredential;
    return credential.expires > Date.now() ? credential : undefined;
  }

  private mac(body: string): string {
    return createHmac('sha256', this.key).update(body).digest('base64url');
  }
}

const ADMIN_ORGANIZATION_PATH = /^\/admin\/v1\/organizations\/([^/?]+)/;

/**
 * Mounted first on the gateway: a request with a valid credential gets `res.locals.billingActor`
 * and, on /v1, `res.locals.dashboardCaller` (the Secret Key identity of its organization and
 * environment). A credential for one organization cannot reach another's admin routes. The
 * header is removed so it never travels to a service.
 */
export function dashboardIdentity(signer: CredentialSigner): RequestHandler {
  return (req, res, next) => {
    const header = req.headers[DASHBOARD_CREDENTIAL_HEADER];
    if (header === undefined) return next();
    delete req.headers[DASHBOARD_CREDENTIAL_HEADER];
    const credential = typeof header === 'string' ? signer.verify(header) : undefined;
    if (!credential) return next(notFound('Not found'));
    if (credential.organization && !allowsPath(credential.organization, req)) {
      return next(notFound('Organization not found'));
    }
    res.locals.billingActor = credential.actor;
    if (credential.organization && credential.environment) {
      const caller: CallerIdentity = {
        organization: credential.organization,
        environment: credential.environment,
        keyKind: 'secret',
        keyId: credential.actor.type === 'dashboard_user' ? `dashboard:${credential.actor.id}` : 'dashboard:operator',
      };
      res.locals.dashboardCaller = caller;
    }
    next();
  };
}

function allowsPath(organization: string, req: Request): boolean {
  if (req.path.startsWith('/v1/')) return true;
  const match = ADMIN_ORGANIZATION_PATH.exec(req.path);
  return match !== null && decodeURIComponent(match[1]!) === organization;
}
