import {
  ApiError,
  type CallerIdentity,
  IDENTITY_HEADERS,
  asPortalError,
  identityHeaders,
  unauthorized,
} from '@billing/contracts';
import { DEFAULT_SERVICE_URLS, type ServiceContext, positiveNumberSetting, startPeriodic } from '@billing/runtime';
import {
  DEFAULT_BODY_LIMIT,
  ROUTE_PATTERN,
  type ServiceApp,
  jsonBodies,
  refuseInvalidText,
  refuseUnreadableBodies,
} from '@billing/service';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ErrorRequestHandler,
  type Express,
  type Request,
  type RequestHandler,
  type Response,
  Router,
} from 'express';
import proxyAddress from 'proxy-addr';
import { mountAdminRoutes } from './admin/routes';
import { DEFAULT_ADMISSION, admissionMiddleware, inFlightAdmission } from './admission/in-flight-limit';
import {
  ABANDONED_AFTER_MS,
  AWAIT_OUTCOME,
  type AwaitOutcome,
  type IdempotencyOptions,
  IdempotencyStore,
  idempotency,
  idempotencyDdl,
} from './idempotency';
import { API_KEY_CACHE_TTL_MS, ApiKeyAuthenticator, handOverKeyHeaders, presentsApiKey } from './auth/authenticate';
import { OriginAllowList, enforceAllowedOrigin, mountCors } from './cors/cors';
import { FailedAuthenticationLimiter } from './auth/failed-authentication';
import { type KeyLimits, knownCallerLimits, knownKeyFirst } from './auth/known-key';
import { CredentialSigner, createDashboardTables, dashboardIdentity, mountDashboard } from './dashboard';
import { eventsApiDocument, publicApiDocument } from './openapi';
import { Organizations } from './organizations/organizations';
import { OrganizationChanges } from './organizations/changes';
import { organizationsDdl } from './organizations/read-model';
import {
  type ClosableRateLimitStore,
  FAILED_AUTHENTICATION_LIMITS,
  PUBLISHABLE_ENTITLEMENT_LIMITS,
  RATE_LIMITS,
  RATE_LIMIT_WINDOW_MS,
  createRateLimitStore,
  hostedPageLimits,
  promotionValidationLimits,
  rateLimit,
} from './rate-limit';
import {
  ENTITLEMENTS_PATH,
  HOSTED_PAGE_PATHS,
  KEYLESS_COUPON_PATH,
  PORTAL_API_PATH,
  PORTAL_PAGE_PATHS,
  PUBLIC_ROUTES,
  type UpstreamName,
  VALIDATE_PROMOTION_CODE_PATH,
} from './routing/public-routes';
import { signForwarded, stripIdentityHeaders, vouchAs } from './routing/identity-headers';
import { inSequence } from './routing/in-sequence';
import { RouteTable } from './routing/route-table';
import { serviceReads } from './routing/service-reads';
import { createUpstream, type UpstreamHandler } from './upstream';
import { ANALYTICS_METRICS_PATH, analyticsMetrics, validAnalyticsQuery } from './analytics/metrics';
import { sdkShapedRefusals } from './refusals';
import { OAuthServer } from './oauth/server';
import { TOKEN_SCOPES, accessTokenOf, requireTokenScope } from './oauth/access-tokens';
import { breakerCaller } from './upstream/breaker-caller';
import { publicLane } from './routing/public-lane';

export const DEFAULT_UPSTREAMS: Record<UpstreamName, string> = {
  catalog: DEFAULT_SERVICE_URLS.CATALOG_SERVICE_URL,
  checkout: DEFAULT_SERVICE_URLS.CHECKOUT_SERVICE_URL,
  billing: DEFAULT_SERVICE_URLS.BILLING_SERVICE_URL,
  promotions: DEFAULT_SERVICE_URLS.PROMOTIONS_SERVICE_URL,
  notifications: DEFAULT_SERVICE_URLS.NOTIFICATIONS_SERVICE_URL,
};

/**
 * How long the gateway waits for a service (docs/decisions/0005): reads 1.5 s; writes 10 s, as
 * they may queue behind concurrent writers of their record and retry. A write past its timeout
 * answers 504 and is left to finish: its answer is kept under its Idempotency-Key if it comes
 * while the key's claim still holds (ABANDONED_AFTER_MS, less a margin).
 */
export const DEFAULT_READ_TIMEOUT_MS = 1500;
export const DEFAULT_WRITE_TIMEOUT_MS = 10_000;

function upstreamTimeouts(config: ServiceContext['config']) {
  const timeoutMs = positiveNumberSetting(config, 'UPSTREAM_TIMEOUT_MS', DEFAULT_READ_TIMEOUT_MS);
  const writeTimeoutMs = Math.min(
    positiveNumberSetting(config, 'UPSTREAM_WRITE_TIMEOUT_MS', DEFAULT_WRITE_TIMEOUT_MS),
    ABANDONED_AFTER_MS / 2,
  );
  return { timeoutMs, writeTimeoutMs, lateAnswerMs: ABANDONED_AFTER_MS - 10_000 - writeTimeoutMs };
}

/** Idempotency keys older than 24 hours are deleted this often. */
const IDEMPOTENCY_PURGE_INTERVAL_MS = 60 * 60_000;

const upstreamUrl = (config: ServiceContext['config'], name: UpstreamName) =>
  config[`${name.toUpperCase()}_SERVICE_URL`] ?? DEFAULT_UPSTREAMS[name];

/**
 * Admin writes go to the owning service's /admin/<resource> (the organization travels in a
 * header); public paths pass unchanged.
 */
const adminPaths = (path: string) =>
  path.replace(
    /^\/admin\/v1\/organizations\/[^/]+\/(products|coupons|webhook_endpoints|webhook_events|webhook_deliveries|billing_settings|einvoice_settings|payment_processor|unmatched_payments|portal_configurations|events|metrics|customers|invoices|payments|orders|refunds|subscriptions|pending_charges|emails|email_settings)(?=[/?]|$)/,
    '/admin/$1',
  );

/**
 * Everything the gateway holds while it runs: the key lookup, the rate-limit store and one
 * breaker-guarded upstream per service.
 */
export class Gateway {
  /** Signs the dashboard's loopback calls; the key never leaves this process. */
  private readonly dashboardSigner = new CredentialSigner();

  private constructor(
    private readonly context: ServiceContext,
    private readonly adminToken: string,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly organizations: Organizations,
    private readonly rateLimits: ClosableRateLimitStore,
    private readonly upstreams: Map<UpstreamName, UpstreamHandler>,
    private readonly idempotencyKeys: IdempotencyStore,
    private readonly stopPurge: () => Promise<void>,
    private readonly originAllowList: OriginAllowList,
    private readonly organizationChanges: OrganizationChanges,
    private readonly oauth: OAuthServer,
  ) {
    this.admit = this.admission();
  }

  /** The admission of express's requests and the lane's: one bound for both. */
  private readonly admit: ReturnType<Gateway['admission']>;

  static async create(context: ServiceContext): Promise<Gateway> {
    const adminToken = context.config.ADMIN_TOKEN;
    if (!adminToken) throw new Error('ADMIN_TOKEN is required to run the gateway');
    const schema = context.store.tables.schema;
    const sql = context.infrastructure.database;
    await context.store.migrateSchema(organizationsDdl(schema));
    await context.store.migrateSchema(idempotencyDdl(schema));
    await createDashboardTables(context.store);
    // How long a found key is trusted without the database; a key roll waits as long.
    const keyCacheMs = positiveNumberSetting(context.config, 'GATEWAY_API_KEY_CACHE_MS', API_KEY_CACHE_TTL_MS);
    const authenticator = new ApiKeyAuthenticator(sql, schema, keyCacheMs);
    const originAllowList = new OriginAllowList(sql, schema);
    const changes = await OrganizationChanges.start(sql, schema, keyCacheMs, () => {
      authenticator.forget();
      originAllowList.forget();
    });
    const organizations = new Organizations(context.store, context.now, changes);
    const upstreams = new Map<UpstreamName, UpstreamHandler>();
    for (const name of Object.keys(DEFAULT_UPSTREAMS) as UpstreamName[]) {
      upstreams.set(
        name,
        createUpstream({
          name,
          target: upstreamUrl(context.config, name),
          ...upstreamTimeouts(context.config),
          // A POST that timed out keeps its key's claim until the service's answer comes.
          awaitLateAnswer: (_req, res) => (res.locals[AWAIT_OUTCOME] as AwaitOutcome | undefined)?.(),
          pathRewrite: (_path, req) => adminPaths(req.originalUrl ?? req.url),
          onProxyReq: signForwarded(context.internalSecret),
          onError: (err) => context.logger.warn({ err, upstream: name }, 'upstream unavailable'),
          callerOf: breakerCaller,
        }),
      );
    }
    const rateLimits = createRateLimitStore(
      { REDIS_URL: context.config.REDIS_URL },
      { prefix: context.config.RATE_LIMIT_PREFIX, onError: (err) => context.logger.error({ err }, 'redis error') },
    );
    const idempotencyKeys = new IdempotencyStore(sql, schema);
    const stopPurge = startPeriodic(
      () =>
        idempotencyKeys.purge(context.now()).catch((err) => context.logger.error({ err }, 'idempotency purge failed')),
      IDEMPOTENCY_PURGE_INTERVAL_MS,
    );
    return new Gateway(
      context,
      adminToken,
      authenticator,
      organizations,
      rateLimits,
      upstreams,
      idempotencyKeys,
      stopPurge,
      originAllowList,
      changes,
      await OAuthServer.create(context, trustProxySetting(context.config.TRUST_PROXY) !== undefined),
    );
  }

  mount(app: ServiceApp): void {
    const trustProxy = trustProxySetting(this.context.config.TRUST_PROXY);
    if (trustProxy !== undefined) app.set('trust proxy', trustProxy);
    app.use(stripIdentityHeaders, dashboardIdentity(this.dashboardSigner));
    // Operators keep the admin API and the dashboard while the platform is at capacity.
    app.use(admissionMiddleware(this.admit));
    app.get('/v1/openapi.json', (_req, res) => void res.json(publicApiDocument()));
    app.get('/v1/asyncapi.json', (_req, res) => void res.json(eventsApiDocument()));
    this.oauth.mount(app);
    // The public API first: express tries its layers in turn, and it carries nearly all the traffic.
    this.mountPublicApi(app);
    // The admin API reads its own bodies: the services' one reading and text check (docs/errors.md);
    // the bytes are kept to be forwarded as they came.
    app.use('/admin/v1', ...jsonBodies(DEFAULT_BODY_LIMIT, { keepRawBody: true }), refuseInvalidText);
    mountAdminRoutes(app, {
      adminToken: this.adminToken,
      adminTokenFailures: this.failedAuthentication('admin-token', FAILED_AUTHENTICATION_LIMITS.adminTokenPerAddress),
      organizations: this.organizations,
      sql: this.context.infrastructure.database,
      schema: this.context.store.tables.schema,
      catalog: this.upstream('catalog'),
      promotions: this.upstream('promotions'),
      notifications: this.upstream('notifications'),
      billing: this.upstream('billing'),
      checkout: this.upstream('checkout'),
      readService: this.readService(),
      now: this.context.now,
    });
    mountDashboard(app, {
      sql: this.context.infrastructure.database,
      schema: this.context.store.tables.schema,
      now: this.context.now,
      adminToken: this.adminToken,
      signer: this.dashboardSigner,
      consent: this.oauth.consent(),
    });
    for (const path of HOSTED_PAGE_PATHS) {
      app.all(path, this.hostedPageLimits(), vouchAs('page'), this.upstream('checkout'));
    }
    for (const path of PORTAL_PAGE_PATHS) {
      app.all(path, this.hostedPageLimits(), vouchAs('page'), this.upstream('billing'));
    }
  }

  /** `/v1`: CORS, the API key, its limits, idempotency, and the routes to the services. */
  private mountPublicApi(app: ServiceApp): void {
    const apiKeyFailures = this.failedAuthentication(
      'api-key',
      FAILED_AUTHENTICATION_LIMITS.apiKeyPerAddress,
      presentsApiKey,
    );
    mountCors(app, PUBLIC_ROUTES);
    this.mountKeylessCouponCalls(app);
    const authenticateAndLimit = Router().use(
      apiKeyFailures.protect(this.authenticate()),
      enforceAllowedOrigin(this.originAllowList),
      this.limitRate(),
    );
    const keyLimits = this.keyLimits(apiKeyFailures);
    app.use('/v1', this.knownKeyFirst(keyLimits, authenticateAndLimit), requireTokenScope, refuseUnreadableBodies);
    app.takeFirst(
      publicLane({
        routes: PUBLIC_ROUTES,
        cachedCaller: (req) => this.authenticator.cached(req),
        clientAddress: (req) => proxyAddress(req, app.get('trust proxy fn')),
        admit: this.admit,
        actAs,
        limit: knownCallerLimits(keyLimits),
        upstream: (name) => this.upstreams.get(name)!,
      }),
    );
    app.use(this.publicRoutes());
    app.get(
      ANALYTICS_METRICS_PATH,
      allowKeys(['secret']),
      validAnalyticsQuery,
      analyticsMetrics(this.readService(), this.context.now),
    );
    // The gateway's own refusals (key, rate limit, idempotency) in the portal sessions' codes,
    // and in the shapes the recur-tw SDK reads for its calls.
    app.use(PORTAL_API_PATH, portalErrorCodes);
    app.use('/v1', sdkShapedRefusals);
  }

  /**
   * The recur-tw SDK's coupon box (0.11) applies and removes a code with neither key nor client
   * secret: such a call goes to the checkout's page route, where only the page origin that created
   * the embedded checkout may make it (docs/embedded-checkout.md), limited per address as a payment.
   */
  private mountKeylessCouponCalls(app: Express): void {
    const keyless: RequestHandler = (req, _res, next) => next(presentsApiKey(req) ? 'route' : undefined);
    const toPageRoute: RequestHandler = (req, _res, next) => {
      const query = req.url.indexOf('?');
      const path = `/embed/checkouts/${encodeURIComponent(String(req.params.id))}/coupon`;
      // The upstream forwards the original URL: both say where the call goes now.
      req.url = req.originalUrl = path + (query < 0 ? '' : req.url.slice(query));
      next();
    };
    for (const method of ['post', 'delete'] as const) {
      app[method](
        KEYLESS_COUPON_PATH,
        keyless,
        toPageRoute,
        this.hostedPageLimits(),
        vouchAs('page'),
        this.upstream('checkout'),
      );
    }
  }

  async close(): Promise<void> {
    await this.stopPurge();
    await this.oauth.close();
    await this.organizationChanges.stop();
    await Promise.all([...this.upstreams.values()].map((upstream) => upstream.close()));
    await this.rateLimits.close();
  }

  private admission() {
    const config = this.context.config;
    const settings = {
      targetLatencyMs: positiveNumberSetting(config, 'GATEWAY_TARGET_LATENCY_MS', DEFAULT_ADMISSION.targetLatencyMs),
      minInFlight: positiveNumberSetting(config, 'GATEWAY_MIN_IN_FLIGHT', DEFAULT_ADMISSION.minInFlight),
      maxInFlight: positiveNumberSetting(config, 'GATEWAY_MAX_IN_FLIGHT', DEFAULT_ADMISSION.maxInFlight),
    };
    let refused = 0;
    const admit = inFlightAdmission<IncomingMessage & { path?: string }>(settings, {
      finishing: (req) => req.method === 'POST' && PAYMENT_PATH.test(req.path ?? ''),
      onRefused: (bound) => {
        // One line per thousand refusals: at capacity, a line per refusal would add to the load.
        if (refused++ % 1000 === 0) this.context.logger.warn({ bound, refused }, 'at capacity: refusing requests');
      },
    });
    return (req: IncomingMessage & { path?: string }, res: ServerResponse) =>
      OPERATOR_PATHS.test(req.path ?? req.url ?? '') ? undefined : admit(req, res);
  }

  /**
   * Each public route to its service, found in one table lookup per request, after what the
   * route needs in turn: its Idempotency-Key claimed (every POST, a body-keyed one only when the
   * caller sends the header, decision 0031; a POST to an unknown path answers 404 without
   * claiming its key), the limits of its own (promotion-code validation,
   * Publishable-Key entitlement checks), and the keys the spec's access table allows on it (a
   * Secret-only route answers 401 to a Publishable Key).
   */
  private publicRoutes(): RequestHandler {
    const table = new RouteTable(PUBLIC_ROUTES);
    const idempotency = this.idempotency({ keepGeneratedKeys: true });
    const givenKeysOnly = this.idempotency({ keepGeneratedKeys: false });
    const validationLimits = this.validationLimits();
    const entitlementLimit = this.publishableEntitlementLimit();
    const handlers = new Map(
      PUBLIC_ROUTES.map((route) => [
        route,
        inSequence([
          ...(route.method === 'post' ? [route.bodyKeyed ? givenKeysOnly : idempotency] : []),
          ...(route.path === VALIDATE_PROMOTION_CODE_PATH ? validationLimits : []),
          ...(route.path === ENTITLEMENTS_PATH ? [entitlementLimit] : []),
          allowKeys(route.keys),
          this.upstream(route.upstream),
        ]),
      ]),
    );
    return (req, res, next) => {
      const route = table.find(req.method, req.path);
      if (!route) return next();
      res.locals[ROUTE_PATTERN] = route.path;
      handlers.get(route)!(req, res, next);
    };
  }

  /** Signed reads of the services' admin routes, to combine their answers (the metrics). */
  private readService() {
    return serviceReads(this.context.internalSecret, (name) => upstreamUrl(this.context.config, name));
  }

  private upstream(name: UpstreamName): RequestHandler {
    return this.upstreams.get(name)!;
  }

  /** Finds the caller from the API key and hands it to the services as signed identity headers. */
  private authenticate(): RequestHandler {
    return async (req, res, next) => {
      // The dashboard's own calls carry the identity of their organization's Secret Key (src/dashboard/loopback.ts).
      actAs(req, res, dashboardCaller(res) ?? (await this.callerOf(req, res)));
      next();
    };
  }

  /** The API key's caller, or an app's from its OAuth access token, with the scopes the token holds. */
  private async callerOf(req: Request, res: Response): Promise<CallerIdentity> {
    const token = accessTokenOf(req);
    if (!token) return this.authenticator.authenticate(req);
    const { caller, scopes } = await this.oauth.tokens.authenticate(token);
    res.locals[TOKEN_SCOPES] = scopes;
    return caller;
  }

  /** A caller known without I/O takes one round trip to the rate-limit store; others, `otherwise`. */
  private knownKeyFirst(limits: KeyLimits, otherwise: RequestHandler): RequestHandler {
    return knownKeyFirst({
      ...limits,
      known: (req, res) => dashboardCaller(res) ?? this.authenticator.cached(req),
      actAs,
      otherwise,
    });
  }

  /** A known key's limit and its address's failed authentications, counted together. */
  private keyLimits(failures: FailedAuthenticationLimiter): KeyLimits {
    const override = this.limitOverride();
    return {
      failures,
      store: this.rateLimits,
      limitOf: (caller) => ({
        bucket: keyBucket(caller),
        limit: override ?? RATE_LIMITS[caller.environment],
        windowMs: RATE_LIMIT_WINDOW_MS,
      }),
      now: () => this.context.now().getTime(),
      onError: (err) => this.context.logger.error({ err }, 'rate-limit store failed; letting the request through'),
    };
  }

  private idempotency(options: IdempotencyOptions): RequestHandler {
    return idempotency(
      this.idempotencyKeys,
      this.context.now,
      (err) => this.context.logger.error({ err }, 'idempotency record not saved'),
      options,
    );
  }

  private hostedPageLimits(): RequestHandler {
    const onError = (err: unknown) => this.context.logger.error({ err }, 'rate-limit store failed');
    return hostedPageLimits(this.rateLimits, () => this.context.now().getTime(), onError, this.limitOverride());
  }

  /** For benchmarks that measure the gateway rather than its 429s; never set in production. */
  private limitOverride(): number | undefined {
    const configured = Number(this.context.config.RATE_LIMIT_PER_MINUTE_OVERRIDE);
    return configured > 0 ? configured : undefined;
  }

  private validationLimits(): RequestHandler[] {
    const onError = (err: unknown) => this.context.logger.error({ err }, 'rate-limit store failed');
    return promotionValidationLimits(this.rateLimits, () => this.context.now().getTime(), onError);
  }

  private publishableEntitlementLimit(): RequestHandler {
    return rateLimit({
      store: this.rateLimits,
      now: () => this.context.now().getTime(),
      limitFor: (req, res) => {
        const caller = res.locals.caller as CallerIdentity;
        if (caller.keyKind !== 'publishable') return undefined;
        return {
          bucket: `entitlements-ip:${caller.keyId}:${req.ip ?? 'unknown'}`,
          ...PUBLISHABLE_ENTITLEMENT_LIMITS.perIp,
        };
      },
      onError: (err) => this.context.logger.error({ err }, 'rate-limit store failed; letting the request through'),
    });
  }

  private limitRate(): RequestHandler {
    const override = this.limitOverride();
    return rateLimit({
      store: this.rateLimits,
      now: () => this.context.now().getTime(),
      windowMs: RATE_LIMIT_WINDOW_MS,
      limitFor: (_req, res) => {
        const caller = res.locals.caller as CallerIdentity;
        return { bucket: keyBucket(caller), limit: override ?? RATE_LIMITS[caller.environment] };
      },
      onError: (err) => this.context.logger.error({ err }, 'rate-limit store failed; letting the request through'),
    });
  }

  /** Repeated failed authentication per client address: API keys, the admin token. */
  private failedAuthentication(
    name: string,
    rule: { limit: number; windowMs: number },
    presented?: ConstructorParameters<typeof FailedAuthenticationLimiter>[0]['presented'],
  ): FailedAuthenticationLimiter {
    return new FailedAuthenticationLimiter({
      store: this.rateLimits,
      now: () => this.context.now().getTime(),
      rule: { name, ...rule },
      presented,
      onError: (err) => this.context.logger.error({ err }, 'rate-limit store failed; letting the request through'),
    });
  }
}

/** Operators keep the admin API and the dashboard while the platform is at capacity. */
const OPERATOR_PATHS = /^\/(admin|dashboard)(\/|$)/;

/** The hosted page's payment of an open session (its form post). */
const PAYMENT_PATH = /^\/checkout\/[^/]+(\/pay)?$/;

/** The caller the dashboard's own loopback calls carry (src/dashboard/loopback.ts). */
const dashboardCaller = (res: Response): CallerIdentity | undefined =>
  res.locals.dashboardCaller as CallerIdentity | undefined;

/** Hands the caller to the routes (`res.locals.caller`) and to the services (identity headers). */
function actAs(req: IncomingMessage, res: { locals: Record<string, unknown> }, caller: CallerIdentity): void {
  res.locals.caller = caller;
  Object.assign(req.headers, identityHeaders(caller), { [IDENTITY_HEADERS.scope]: 'key' });
  handOverKeyHeaders(req);
}

/** Each API key's own budget of requests. */
const keyBucket = (caller: CallerIdentity) => `key:${caller.keyId}`;

/** Errors the gateway raises on a portal-session route, as the spec shows them there. */
const portalErrorCodes: ErrorRequestHandler = (err, _req, _res, next) =>
  next(err instanceof ApiError ? asPortalError(err) : err);

/** Secret-only routes answer 401 to a Publishable Key, as the spec's access table says. */
function allowKeys(kinds: readonly CallerIdentity['keyKind'][]): RequestHandler {
  return (_req, res, next) => {
    const caller = res.locals.caller as CallerIdentity;
    next(kinds.includes(caller.keyKind) ? undefined : unauthorized('This endpoint requires a Secret Key'));
  };
}

/**
 * `TRUST_PROXY` for a gateway behind a load balancer: Express's `trust proxy` (`true`, a hop
 * count, or addresses such as `loopback` or `10.0.0.0/8`), so that `req.ip`, which the per-IP
 * limits count, is the client's and not the balancer's. Unset: the socket's address.
 */
function trustProxySetting(value: string | undefined): boolean | number | string | undefined {
  if (!value) return undefined;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value;
}
