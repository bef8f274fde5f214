export { createGatewayService } from './service';
export { DEFAULT_UPSTREAMS } from './gateway';
export { ADMIN_TOKEN, type CreatedOrganization, type Keys, clientOf, startGateway } from './testing';
// What the platform scenarios (tests/platform) check the gateway against.
export { clientAddress } from './auth/failed-authentication';
export { ABANDONED_AFTER_MS, IDEMPOTENCY_WINDOW_MS, IdempotencyStore, idempotencyDdl } from './idempotency/store';
export { publicApiDocument } from './openapi';
export { HOSTED_PAGE_LIMITS } from './rate-limit/limits';
export { signForwarded } from './routing/identity-headers';
