import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { Lane, LaneRequest, LaneResponse } from './lane';
import { RoutePath, pathOfTarget, pathSegmentsOf } from './route-path';
import { type RequestSchemas, type ValidatedInput, validate } from './validate';

/**
 * One JSON route a service answers on a lane as well as through express (docs/decisions/0036):
 * the same layers, in the same order, run on node's own request and response.
 */
export interface RouteLaneSpec<S extends RequestSchemas> {
  method: 'POST';
  /** The route's path as express writes it, `:name` for a parameter (one path segment). */
  path: string;
  schemas: S;
  /** What the service's app-level layers for this path run after the body parser (`requireCaller`). */
  before?: readonly RequestHandler[];
  /** The route's body (200) for its validated input; throws to refuse, as the express route does. */
  answer: (req: LaneRequest, input: ValidatedInput<S>) => Promise<unknown>;
  /** What the error layers between the route and the service's error handler make of a failure. */
  translateError?: (error: unknown, res: LaneResponse) => unknown;
}

/** What the service's app gives every route lane: its guards and its error handler's writing. */
export interface RouteLaneParts {
  /** The layers every request passes before the routes (the internal signature, the body parser, the text check). */
  guards: readonly RequestHandler[];
  /** Writes a failure as the service's error handler does. */
  sendError: (req: LaneRequest, res: LaneResponse, error: unknown) => void;
}

/**
 * A lane that takes the requests of one route (`method` and a path matching `path`, any query)
 * and runs on them the layers express would: the service's guards, `before`, `validate`, then
 * `answer`, its body written as `res.json` writes it. Express swaps the prototypes of node's
 * request and response, which makes node's HTTP code several times slower on them, and walks
 * every layer before the route (docs/decisions/0026).
 */
export function routeLane<S extends RequestSchemas>(spec: RouteLaneSpec<S>, parts: RouteLaneParts): Lane {
  const route = new RoutePath(spec.path);
  const layers = [...parts.guards, ...(spec.before ?? []), validate(spec.schemas) as unknown as RequestHandler];
  return {
    accept(req) {
      if (req.method !== spec.method || req.url === undefined) return undefined;
      const path = pathOfTarget(req.url);
      const params = decodedParamsOf(route, path);
      if (!params) return undefined;
      return (laneReq, res) => {
        Object.assign(laneReq, { path, params, query: {}, body: undefined });
        void serve(laneReq, res);
      };
    },
  };

  async function serve(req: LaneRequest, res: LaneResponse): Promise<void> {
    try {
      for (const layer of layers) await run(layer, req, res);
      const input = res.locals.input as ValidatedInput<S>;
      writeJson(res, 200, await spec.answer(req, input));
    } catch (error) {
      parts.sendError(req, res, spec.translateError ? spec.translateError(error, res) : error);
    }
  }
}

/** One express layer on the lane's request: resolves on `next()`, rejects on `next(error)` or a throw. */
function run(layer: RequestHandler, req: LaneRequest, res: LaneResponse): Promise<void> {
  return new Promise((resolve, reject) => {
    const next = (error?: unknown) => (error === undefined || error === 'route' ? resolve() : reject(error));
    try {
      const returned = (layer as unknown as (...args: unknown[]) => unknown)(req, res, next);
      if (returned instanceof Promise) returned.catch(reject);
    } catch (error) {
      reject(error);
    }
  });
}

/** `body` as express's `res.status(status).json(body)` writes it: the same headers, the same weak ETag. */
export function writeJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('ETag', weakETag(text));
  res.end(text);
}

/** Express's default ETag (the `etag` package, weak): the length in hex and the SHA-1's first 27 base64 characters. */
function weakETag(text: string): string {
  const length = Buffer.byteLength(text);
  if (length === 0) return 'W/"0-2jmj7l5rSw0yVb/vlWAYkK/YBwk"';
  const hash = createHash('sha1').update(text, 'utf8').digest('base64').substring(0, 27);
  return `W/"${length.toString(16)}-${hash}"`;
}

/** The parameters of `path` decoded as express decodes them, when it matches; undefined otherwise. */
function decodedParamsOf(route: RoutePath, path: string): Record<string, string> | undefined {
  const params = route.paramsOf(pathSegmentsOf(path));
  if (!params) return undefined;
  try {
    return Object.fromEntries(Object.entries(params).map(([name, value]) => [name, decodeURIComponent(value)]));
  } catch {
    return undefined; // a malformed escape: express's 400 is express's to write
  }
}
