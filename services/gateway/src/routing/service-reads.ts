import { ApiError } from '@billing/contracts';
import { signInternalCall } from '@billing/signing';
import type { UpstreamName } from './public-routes';

/** A read the admin API makes of a service to combine answers (the metrics), not to relay one. */
export type ServiceRead = (service: UpstreamName, path: string, organization: string) => Promise<unknown>;

const READ_TIMEOUT_MS = 5000;

/**
 * Signed admin reads of the services' `/admin` routes (docs/decisions/0007). A service's own
 * 4xx is passed on as it came; one that cannot answer is `503 service_unavailable`.
 */
export function serviceReads(secret: string, urlOf: (service: UpstreamName) => string): ServiceRead {
  return async (service, path, organization) => {
    const headers = signInternalCall(secret, {
      scope: 'admin',
      method: 'GET',
      path,
      identity: { organization },
      actor: { type: 'admin' },
    });
    let response: Response;
    try {
      response = await fetch(`${urlOf(service)}${path}`, { headers, signal: AbortSignal.timeout(READ_TIMEOUT_MS) });
    } catch (error) {
      throw Object.assign(ApiError.of('service_unavailable', `${service} is unavailable`), { cause: error });
    }
    const body = (await response.json().catch(() => undefined)) as
      { error?: { code: string; message: string; details?: unknown[] } } | undefined;
    if (response.ok) return body;
    if (response.status < 500 && body?.error) {
      throw new ApiError(response.status, body.error.code, body.error.message, body.error.details);
    }
    throw ApiError.of('service_unavailable', `${service} is unavailable`);
  };
}
