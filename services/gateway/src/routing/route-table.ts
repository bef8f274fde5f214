import { RoutePath, pathSegmentsOf } from '@billing/service';

/**
 * Finds the public route a request is for in one pass over a table, instead of express trying
 * one layer per route (about 60 of them, and a CORS layer per browser path) on every request.
 *
 * Paths match as express matches them (`RoutePath`). A GET route also answers HEAD. Where two
 * patterns match one path, the one listed first wins, as express's order does.
 */
export class RouteTable<R extends { method: string; path: string }> {
  private readonly compiled: { route: R; pattern: RoutePath }[];

  constructor(routes: readonly R[]) {
    this.compiled = routes.map((route) => ({ route, pattern: new RoutePath(route.path) }));
  }

  /** The first route for this method whose pattern matches the path. */
  find(method: string, path: string): R | undefined {
    const wanted = (method === 'HEAD' ? 'GET' : method).toLowerCase();
    const segments = pathSegmentsOf(path.toLowerCase());
    for (const { route, pattern } of this.compiled) {
      if (route.method === wanted && pattern.matchesLowercased(segments)) return route;
    }
    return undefined;
  }

  /** Every route, whatever its method, whose pattern matches the path, in the table's order. */
  matching(path: string): R[] {
    const segments = pathSegmentsOf(path.toLowerCase());
    return this.compiled.filter(({ pattern }) => pattern.matchesLowercased(segments)).map(({ route }) => route);
  }
}
