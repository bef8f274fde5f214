import { z } from 'zod';
import { ErrorEnvelope } from './errors';
import { OAUTH_SCOPES, OAUTH_SCOPE_DESCRIPTIONS, type OAuthScope } from './oauth-scopes';

export type HttpMethod = 'get' | 'post' | 'patch' | 'put' | 'delete';

export interface RouteDoc {
  method: HttpMethod;
  /** OpenAPI path, relative to the server URL (which ends in /v1), with `{param}` placeholders. */
  path: string;
  summary: string;
  tags?: string[];
  /** Which keys the route takes, per the spec's key-access table. */
  security?: Array<'secretKey' | 'publishableKey' | 'adminToken'>;
  /** The OAuth 2.0 scope with which an app's access token may also make this read (docs/oauth.md). */
  oauthScope?: OAuthScope;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  responses: Record<number, { description: string; schema?: z.ZodType }>;
}

/**
 * The 400 of a route whose path or query parameters fail their schema (or name an unknown
 * cursor): `bad_request` with `details[]` naming each parameter. Bodies answer 422.
 */
export const invalidParametersResponse = {
  description: 'bad_request: invalid or missing query or path parameters; details[] name each one',
  schema: ErrorEnvelope,
};

const COMPONENT_REF = (id: string) => `#/components/schemas/${id}`;

/**
 * Routes register their zod schemas here; `toOpenApi()` turns them into an OpenAPI 3.1
 * document. Schemas that carry `.meta({ id })` become shared components.
 */
export class OpenApiRegistry {
  private readonly routes: RouteDoc[] = [];

  route(doc: RouteDoc): this {
    this.routes.push(doc);
    return this;
  }

  get registeredRoutes(): readonly RouteDoc[] {
    return this.routes;
  }

  toOpenApi(info: { title: string; version: string; serverUrl?: string }) {
    const components: Record<string, unknown> = {};
    const paths: Record<string, Record<string, unknown>> = {};
    for (const route of this.routes) {
      paths[route.path] ??= {};
      paths[route.path]![route.method] = this.operation(route, components);
    }
    return {
      openapi: '3.1.0',
      info: { title: info.title, version: info.version },
      servers: info.serverUrl ? [{ url: info.serverUrl }] : [],
      paths,
      components: {
        schemas: components,
        securitySchemes: {
          secretKey: { type: 'http', scheme: 'bearer', description: 'Secret Key: sk_test_... or sk_live_...' },
          publishableKey: {
            type: 'http',
            scheme: 'bearer',
            description: 'Publishable Key: pk_test_... or pk_live_...',
          },
          ...(this.routes.some((route) => route.oauthScope) ? { oauth2: OAUTH2_SCHEME } : {}),
          ...(this.routes.some((route) => route.security?.includes('adminToken'))
            ? { adminToken: { type: 'http', scheme: 'bearer', description: "The operator's ADMIN_TOKEN" } }
            : {}),
        },
      },
    };
  }

  private operation(route: RouteDoc, components: Record<string, unknown>) {
    const json = (schema: z.ZodType, io: 'input' | 'output') => toComponentJson(schema, io, components);
    const parameters = [...parametersOf(route.params, 'path', json), ...parametersOf(route.query, 'query', json)];
    const responses: Record<string, unknown> = {};
    for (const [status, response] of Object.entries(route.responses)) {
      responses[status] = response.schema
        ? {
            description: response.description,
            content: { 'application/json': { schema: json(response.schema, 'output') } },
          }
        : { description: response.description };
    }
    return {
      summary: route.summary,
      ...(route.tags ? { tags: route.tags } : {}),
      ...(route.security ? { security: securityOf(route) } : {}),
      ...(parameters.length ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: json(route.body, 'input') } } } }
        : {}),
      responses,
    };
  }
}

/**
 * The authorization server of the gateway (docs/oauth.md): its URLs are relative to the API's
 * origin, as every self-hosted platform has its own; discovery is at /oauth/.well-known/openid-configuration.
 */
const OAUTH2_SCHEME = {
  type: 'oauth2',
  description:
    'Apps a merchant connects: authorization code with PKCE (S256), access tokens of 10 minutes, rotating refresh tokens. OpenID Connect discovery: /oauth/.well-known/openid-configuration',
  flows: {
    authorizationCode: {
      authorizationUrl: '/oauth/auth',
      tokenUrl: '/oauth/token',
      refreshUrl: '/oauth/token',
      scopes: Object.fromEntries(OAUTH_SCOPES.map((scope) => [scope, OAUTH_SCOPE_DESCRIPTIONS[scope]])),
    },
  },
};

/** Each key the route takes, and the OAuth scope that also opens it. */
const securityOf = (route: RouteDoc) => [
  ...route.security!.map((name) => ({ [name]: [] })),
  ...(route.oauthScope ? [{ oauth2: [route.oauthScope] }] : []),
];

type ToJson = (schema: z.ZodType, io: 'input' | 'output') => unknown;

function parametersOf(shape: z.ZodObject | undefined, location: 'path' | 'query', json: ToJson) {
  if (!shape) return [];
  return Object.entries(shape.shape).map(([name, schema]) => ({
    name,
    in: location,
    required: location === 'path' || !(schema as z.ZodType).safeParse(undefined).success,
    schema: json(schema as z.ZodType, 'input'),
  }));
}

/**
 * zod emits schemas named with `.meta({ id })` under the schema's own `$defs`; OpenAPI wants
 * them once under `components.schemas`, so they are moved there and the refs rewritten.
 */
function toComponentJson(schema: z.ZodType, io: 'input' | 'output', components: Record<string, unknown>) {
  const generated = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  const {
    $schema: _dialect,
    $defs,
    ...rest
  } = JSON.parse(JSON.stringify(generated).replaceAll('"#/$defs/', `"${COMPONENT_REF('')}`)) as Record<
    string,
    unknown
  > & { $defs?: Record<string, unknown> };
  Object.assign(components, $defs ?? {});
  if (typeof rest.id === 'string') {
    const { id, ...body } = rest;
    components[id] = body;
    return { $ref: COMPONENT_REF(id) };
  }
  return rest;
}
