import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type Express } from 'express';
import type { Logger } from 'pino';
import { requestContext, requestTracker } from './context';
import type { Lane, LaneRequest, LaneResponse } from './lane';
import { errorHandler, notFoundHandler, sendErrorOn } from './errors';
import { mountHealthRoutes } from './health';
import { jsonBodies } from './json-body';
import { type InternalAuthOptions, requireInternalSignature } from './identity';
import { ServiceMetrics } from './metrics';
import { Readiness, type ReadinessCheck } from './readiness';
import { refuseInvalidText } from './text-guard';
import { type RouteLaneSpec, routeLane } from './route-lane';
import type { RequestSchemas } from './validate';

export interface CreateAppOptions {
  /** Service name, e.g. 'catalog'. */
  name: string;
  logger: Logger;
  /** Largest JSON body accepted; larger ones get 413. */
  bodyLimit?: string | number;
  /** Paths whose JSON bodies may be larger than `bodyLimit` (path -> limit): reports of many events at once. */
  largeBodies?: Readonly<Record<string, string>>;
  /**
   * False leaves request bodies unread, for a proxy that forwards them as they came; the text
   * check at the edge (`refuseInvalidText`) is then the proxy's to mount where it reads.
   */
  parseJsonBodies?: boolean;
  /** Dependency checks behind `/readyz`, run concurrently. */
  readiness?: readonly ReadinessCheck[];
  /** A check that takes longer than this counts as failed. */
  readinessTimeoutMs?: number;
  /**
   * Every route but `/healthz`, `/readyz` and `/metrics` then answers only calls signed with
   * the internal secret (the gateway's or a sibling service's). Absent for the gateway, which
   * faces the network and authenticates callers itself.
   */
  internalAuth?: InternalAuthOptions;
  /** Mounts the service's routes; runs after the body parser and before the 404 handler. */
  routes?: (app: ServiceApp) => void;
}

/** An express app built by `createApp`, carrying what `startService` needs to drain it. */
export type ServiceApp = Express & {
  readonly serviceName: string;
  readonly readiness: Readiness;
  /** The service's Prometheus registry, served at `/metrics`; services may add their own series. */
  readonly metrics: ServiceMetrics;
  /** Lets `lane` answer the requests it accepts before express, with the same request line and metrics. */
  takeFirst(lane: Lane): void;
  /** A lane for one JSON route, through this app's own guards and error writing (`routeLane`). */
  routeLane<S extends RequestSchemas>(spec: RouteLaneSpec<S>): Lane;
  /** What the HTTP server calls: the lane, for what it accepts, else express. */
  serve(req: IncomingMessage, res: ServerResponse): void;
};

export const DEFAULT_BODY_LIMIT = '100kb';

export function createApp(options: CreateAppOptions): ServiceApp {
  const bodyLimit = options.bodyLimit ?? DEFAULT_BODY_LIMIT;
  const { logger } = options;
  const readiness = new Readiness(options.readiness ?? [], logger, options.readinessTimeoutMs);

  const app = express();
  app.disable('x-powered-by');
  const metrics = new ServiceMetrics(options.name);
  app.use(metrics.middleware());
  app.use(requestContext(logger));
  mountHealthRoutes(app, readiness);
  metrics.mount(app);
  if (options.internalAuth) app.use(requireInternalSignature(options.internalAuth));
  // One reading of a JSON body, and its text checked, before any route (docs/errors.md). A
  // proxy (the gateway) leaves both to the services it forwards to, which answer in their codes.
  if (options.parseJsonBodies !== false) {
    // A body read by its path's parser is not read again by the general one.
    for (const [path, limit] of Object.entries(options.largeBodies ?? {})) app.use(path, jsonBodies(limit));
    app.use(jsonBodies(bodyLimit), refuseInvalidText);
  }
  // What express runs before every route, for a route lane: the same layers, made once per lane.
  const laneGuards = (path: string) => [
    ...(options.internalAuth ? [requireInternalSignature(options.internalAuth)] : []),
    ...(options.parseJsonBodies !== false ? [...jsonBodies(bodyLimitOf(path)), refuseInvalidText] : []),
  ];
  const bodyLimitOf = (path: string) =>
    Object.entries(options.largeBodies ?? {}).find(([prefix]) => path.startsWith(prefix))?.[1] ?? bodyLimit;
  let lane: Lane | undefined;
  const track = requestTracker(logger);
  const serve = (req: IncomingMessage, res: ServerResponse): void => {
    const handle = lane?.accept(req);
    if (!handle) return void app(req, res);
    const laneReq = Object.assign(req, { originalUrl: req.url }) as LaneRequest;
    const laneRes = Object.assign(res, { locals: {} }) as LaneResponse;
    metrics.track(laneReq, laneRes, true);
    track(laneReq, laneRes);
    handle(laneReq, laneRes);
  };
  const serviceApp = Object.assign(app, {
    serviceName: options.name,
    readiness,
    metrics,
    takeFirst: (first: Lane) => void (lane = first),
    routeLane: <S extends RequestSchemas>(spec: RouteLaneSpec<S>) =>
      routeLane(spec, { guards: laneGuards(spec.path), sendError: sendErrorOn(bodyLimit) }),
    serve,
  });
  options.routes?.(serviceApp);
  app.use(notFoundHandler);
  app.use(errorHandler(bodyLimit));
  return serviceApp;
}
