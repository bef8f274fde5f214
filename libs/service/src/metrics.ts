import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Express, RequestHandler } from 'express';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Seconds; from a cache hit to a slow upstream. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Prometheus metrics of one service: `http_requests_total` and
 * `http_request_duration_seconds` by method, route pattern and status, plus the process
 * metrics. One registry per app, so that several services in one process (embedded mode,
 * tests) keep their numbers apart; every series carries `service`.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly durations: Histogram<'method' | 'route' | 'status'>;
  private readonly laneRequests: Counter;

  constructor(service: string) {
    this.registry.setDefaultLabels({ service });
    collectDefaultMetrics({ register: this.registry });
    const labelNames = ['method', 'route', 'status'] as const;
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status',
      labelNames,
      registers: [this.registry],
    });
    this.durations = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from the request to the end of its response',
      labelNames,
      buckets: DURATION_BUCKETS,
      registers: [this.registry],
    });
    this.laneRequests = new Counter({
      name: 'http_lane_requests_total',
      help: "Requests the service's lane took before express (also counted in http_requests_total)",
      registers: [this.registry],
    });
  }

  /** Records every request when its response ends; probes and scrapes included. */
  middleware(): RequestHandler {
    return (req, res, next) => {
      this.track(req, res);
      next();
    };
  }

  /** Records the request when its response ends: express's or, for a lane, node's own. */
  track(req: RoutedRequest, res: ServerResponse & { locals: Record<string, unknown> }, lane = false): void {
    if (lane) this.laneRequests.inc();
    const started = process.hrtime.bigint();
    res.once('finish', () => {
      const series = this.seriesOf(req.method ?? 'GET', routeOf(req, res.locals), res.statusCode);
      series.requests.inc();
      series.durations.observe(Number(process.hrtime.bigint() - started) / 1e9);
    });
  }

  /** One label set's series, looked up once: prom-client hashes the labels on every call otherwise. */
  private readonly series = new Map<
    string,
    { requests: Counter.Internal; durations: Histogram.Internal<'method' | 'route' | 'status'> }
  >();

  private seriesOf(method: string, route: string, status: number) {
    const key = `${method} ${status} ${route}`;
    let found = this.series.get(key);
    if (!found) {
      const labels = { method, route, status: String(status) };
      found = { requests: this.requests.labels(labels), durations: this.durations.labels(labels) };
      this.series.set(key, found);
    }
    return found;
  }

  mount(app: Express): void {
    app.get('/metrics', async (_req, res) => {
      res.type(this.registry.contentType).send(await this.registry.metrics());
    });
  }
}

/** What express adds to a request that a route matched; a lane's request has neither. */
type RoutedRequest = IncomingMessage & { route?: { path?: unknown }; baseUrl?: string };

/**
 * Where a handler that routes requests itself (the gateway's route table) names the pattern it
 * matched, for `routeOf`.
 */
export const ROUTE_PATTERN = 'routePattern';

/**
 * The matched route's pattern (`/v1/customers/:id`), never the raw path, so that ids do not
 * become label values; requests no route matched count as `unmatched`.
 */
function routeOf(req: RoutedRequest, locals: Record<string, unknown>): string {
  const named = locals[ROUTE_PATTERN] as string | undefined;
  if (named) return named;
  const pattern = req.route?.path as string | undefined;
  return pattern ? `${req.baseUrl}${pattern}` : 'unmatched';
}
