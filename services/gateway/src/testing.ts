import type { Infrastructure } from '@billing/runtime';
import { startServiceForTest } from '@billing/runtime';
import type { Logger } from '@billing/service';
import { createGatewayService } from './service';

// The gateway started for a test, and a small client of its admin and public APIs: used by the
// gateway's own suites and by the platform scenarios (tests/platform).

/** The admin token of every gateway a test starts. */
export const ADMIN_TOKEN = 'adm_test_token';

export function startGateway(
  infrastructure: Infrastructure,
  config: Record<string, string | undefined>,
  schema?: string,
  now?: () => Date,
  logger?: Logger,
  /** A port known before the start, for settings that name the gateway's address (OAUTH_ISSUER). */
  port?: number,
) {
  return startServiceForTest(createGatewayService(), {
    logger,
    ...(port !== undefined && { port }),
    infrastructure,
    schema,
    now,
    config: { ADMIN_TOKEN, ...config },
  });
}

export interface Keys {
  secret_key: string;
  publishable_key: string;
}
export interface CreatedOrganization {
  id: string;
  name: string;
  api_keys: { sandbox: Keys; production: Keys };
}

/** A small client for the admin API and the public API. */
export function clientOf(baseUrl: string) {
  const json = async (response: Response) => ({
    status: response.status,
    headers: response.headers,
    body: (await response.text().then((t) => (t ? JSON.parse(t) : undefined))) as any,
  });
  const admin = (method: string, path: string, body?: unknown, token = ADMIN_TOKEN) =>
    fetch(`${baseUrl}/admin/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }).then(json);
  const api = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}/v1${path}`, { headers }).then(json);
  const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
  return {
    admin,
    api,
    bearer,
    get: (path: string, key: string) => api(path, bearer(key)),
    async createOrganization(name = 'Acme'): Promise<CreatedOrganization> {
      const created = await admin('POST', '/organizations', { name });
      if (created.status !== 201) throw new Error(`organization not created: ${JSON.stringify(created.body)}`);
      return created.body;
    },
    async createProduct(organizationId: string, product: Record<string, unknown>) {
      return admin('POST', `/organizations/${organizationId}/products`, product);
    },
  };
}
