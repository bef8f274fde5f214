/**
 * Finds the public route a request is for in one pass over a table, instead of express trying
 * one layer per route (about 60 of them, and a CORS layer per browser path) on every request.
 *
 * Paths match as express matches them: `:name` is one non-empty segment, literal segments
 * compare without regard to case, and one trailing slash is allowed. A GET route also answers
 * HEAD. Where two patterns match one path, the one listed first wins, as express's order does.
 */
export class RouteTable<R extends { method: string; path: string }> {
  private readonly compiled: { route: R; segments: (string | undefined)[] }[];

  constructor(routes: readonly R[]) {
    this.compiled = routes.map((route) => ({
      route,
      // `undefined` stands for a parameter: any one segment.
      segments: segmentsOf(route.path).map((segment) => (segment.startsWith(':') ? undefined : segment.toLowerCase())),
    }));
  }

  /** The first route for this method whose pattern matches the path. */
  find(method: string, path: string): R | undefined {
    const wanted = (method === 'HEAD' ? 'GET' : method).toLowerCase();
    const segments = segmentsOf(path.toLowerCase());
    for (const { route, segments: pattern } of this.compiled) {
      if (route.method === wanted && matches(pattern, segments)) return route;
    }
    return undefined;
  }

  /** Every route, whatever its method, whose pattern matches the path, in the table's order. */
  matching(path: string): R[] {
    const segments = segmentsOf(path.toLowerCase());
    return this.compiled.filter(({ segments: pattern }) => matches(pattern, segments)).map(({ route }) => route);
  }
}

function segmentsOf(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/');
}

/** `segments` come from a lowercased path, as the pattern's literals are. */
function matches(pattern: readonly (string | undefined)[], segments: readonly string[]): boolean {
  if (pattern.length !== segments.length) return false;
  for (let i = 0; i < pattern.length; i++) {
    const literal = pattern[i];
    const segment = segments[i]!;
    if (literal === undefined ? segment === '' : literal !== segment) return false;
  }
  return true;
}
