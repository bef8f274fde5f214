/**
 * A route's path as express 5 matches it: `:name` is one non-empty segment, literal segments
 * compare without regard to case, and one trailing slash is allowed. Compiled once per route and
 * matched against a request path split once (`pathSegmentsOf`): the gateway's route table and a
 * service's route lane match paths as express does without express.
 */
export class RoutePath {
  /** Each segment's literal, lowercased, or `undefined` for a parameter. */
  private readonly literals: (string | undefined)[];
  /** Each segment's parameter name, or `undefined` for a literal. */
  private readonly names: (string | undefined)[];

  constructor(readonly path: string) {
    const segments = pathSegmentsOf(path);
    this.literals = segments.map((segment) => (segment.startsWith(':') ? undefined : segment.toLowerCase()));
    this.names = segments.map((segment) => (segment.startsWith(':') ? segment.slice(1) : undefined));
  }

  /** Whether the segments of a lowercased path match (the route table lowercases a path once for many routes). */
  matchesLowercased(segments: readonly string[]): boolean {
    if (segments.length !== this.literals.length) return false;
    for (let i = 0; i < segments.length; i++) {
      const literal = this.literals[i];
      const segment = segments[i]!;
      if (literal === undefined ? segment === '' : literal !== segment) return false;
    }
    return true;
  }

  /** The parameters of a path's segments as they came (not decoded) when they match; otherwise undefined. */
  paramsOf(segments: readonly string[]): Record<string, string> | undefined {
    if (!this.matchesLowercased(segments.map((segment, i) => (this.names[i] ? segment : segment.toLowerCase())))) {
      return undefined;
    }
    const params: Record<string, string> = {};
    this.names.forEach((name, i) => {
      if (name !== undefined) params[name] = segments[i]!;
    });
    return params;
  }
}

/** A path's segments, one trailing slash dropped. */
export function pathSegmentsOf(path: string): string[] {
  const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
  return trimmed.split('/');
}

/** The path of a request target: the text before `?`. */
export function pathOfTarget(url: string): string {
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}
