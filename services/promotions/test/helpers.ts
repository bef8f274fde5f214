import type { ServiceUnderTest } from '@billing/runtime';
import { callService } from '@billing/testing';

export { type Reply, admin, caller, envelope, newOrg } from '@billing/testing';

/** Calls the service under test. */
export function client(running: () => ServiceUnderTest) {
  const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
    callService(running().service.url, method, path, headers, body);
  return { call };
}
