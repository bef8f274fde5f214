import { openApiMarkdown } from '@billing/contracts';
import { publicApiDocument } from './openapi';

/**
 * `docs/api.md`: the public API as `GET /v1/openapi.json` describes it, as one page that ships
 * with the code. `npm run docs:api` writes it (and `docs/openapi.json`); a unit test fails when
 * either is stale.
 */
export function publicApiReference(): string {
  return openApiMarkdown(publicApiDocument(), {
    title: 'Billing API reference',
    introduction: [
      'Generated from the zod schemas in `libs/contracts` by `npm run docs:api`; do not edit it by hand. ' +
        'The same document is `docs/openapi.json` (OpenAPI 3.1) and `GET /v1/openapi.json` on a running gateway. ' +
        'A first request end to end: `docs/quickstart.md`.',
      'Base URL: the gateway, `http://127.0.0.1:8080` under `npm start`; every path below starts with `/v1`. ' +
        'JSON in and out; money is an integer amount of TWD; times are ISO 8601 in UTC.',
      'Keys: `Authorization: Bearer <key>` (or `X-Service-Secret-Key` / `X-Service-Publishable-Key`). ' +
        'The key decides the organization and the environment (`sk_test_`/`pk_test_` Sandbox, `sk_live_`/`pk_live_` Production); ' +
        "another organization's or environment's records answer `404` as if absent. Each operation says which keys it takes; " +
        'a Publishable Key on a Secret-Key operation is `401`.',
      'Apps a merchant connects (OAuth 2.0 / OpenID Connect, `docs/oauth.md`) send their access token as the bearer: it reads ' +
        'what its scopes allow, in its organization and environment, and any other operation answers `403 insufficient_scope`.',
      'Errors: `{ "error": { "code", "message", "details"? } }` with the status of its code; invalid parameters are ' +
        '`400 bad_request`, an invalid body `422 validation_error` (`docs/errors.md`). Every `POST` takes an ' +
        '`Idempotency-Key` (replayed for 24 hours with `Idempotency-Replay: true`); rate limits answer `429 rate_limit_exceeded` ' +
        'with `X-RateLimit-*` headers (README, "Public API at the gateway").',
      'Webhooks and their events: `docs/webhooks.md`. Kafka topics and event schemas: `docs/asyncapi.json`, `docs/topics.md`. ' +
        'The admin API (`/admin/v1`): README, "Admin API".',
    ],
  });
}
