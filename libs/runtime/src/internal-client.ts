import { ApiError, type CallerIdentity } from '@billing/contracts';
import { signInternalCall } from '@billing/signing';
import { type FailureBlame, IsolatedBreaker } from './isolated-breaker';

export interface InternalClientOptions {
  /** The service called, for messages and the breaker's name. */
  name: string;
  baseUrl: string;
  /** The INTERNAL_SECRET (`context.internalSecret`) every call is signed with. */
  secret: string;
  /** Longest wait for an answer; past it the call fails with 503. */
  timeoutMs?: number;
  /** How long the breaker stays open before one trial call. */
  resetTimeoutMs?: number;
}

type Method = 'GET' | 'POST';

export interface InternalResponse<T> {
  status: number;
  body: T;
}

/** A 5xx answer: thrown, so the caller gets 503, and counted by the breakers when 502-504. */
class InternalStatusError extends Error {
  constructor(
    name: string,
    readonly status: number,
  ) {
    super(`${name} answered ${status}`);
  }
}

/** Errors of a connection that was never made: nothing of the call reached the service. */
const NOT_REACHED = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EADDRNOTAVAIL']);

/**
 * As at the gateway: a refused connection is the service's failure, for every tenant; a
 * timeout, a reset or a 502/503/504 may come from the call's own input, so it is the tenant's
 * first. A 500 (a bug answering) and errors before the call left (a bad URL) are not counted.
 */
function blameInternalFailure(error: unknown): FailureBlame {
  if (error instanceof InternalStatusError) return [502, 503, 504].includes(error.status) ? 'caller' : 'none';
  const { name, cause } = error as { name?: unknown; cause?: { code?: unknown } };
  if (name === 'TimeoutError') return 'caller';
  // By name, not `instanceof`: fetch's TypeError comes from another realm under jest's VM.
  if (name === 'TypeError' && cause !== undefined) {
    return typeof cause.code === 'string' && NOT_REACHED.has(cause.code) ? 'upstream' : 'caller';
  }
  return 'none';
}

/**
 * Calls another service's internal API now, when an answer is needed at once (checkout
 * reserving a promotion code). Behind opossum breakers that one tenant cannot open for the
 * others (`IsolatedBreaker`, per organization and environment, in front of one for the whole
 * service): a service that is down, slow or failing answers `503 service_unavailable` within
 * the timeout, and at once while a breaker is open, so the caller can degrade with a clear error
 * instead of hanging. The service's own 4xx answers are returned, not thrown, and do not count
 * as failures; a 5xx is thrown as 503, but only 502/503/504 count.
 */
export class InternalClient {
  private readonly breaker: IsolatedBreaker<[Method, string, unknown, CallerIdentity], InternalResponse<unknown>>;

  constructor(private readonly options: InternalClientOptions) {
    this.breaker = new IsolatedBreaker(
      (method: Method, path: string, body: unknown, caller: CallerIdentity) => this.send(method, path, body, caller),
      {
        name: options.name,
        blame: blameInternalFailure,
        // The call's own AbortSignal times it out (and aborts it).
        resetTimeout: options.resetTimeoutMs ?? 1000,
        errorThresholdPercentage: 50,
        volumeThreshold: 3,
        rollingCountTimeout: 10_000,
        rollingCountBuckets: 10,
      },
    );
  }

  post<T>(path: string, body: unknown, caller: CallerIdentity): Promise<InternalResponse<T>> {
    return this.fire<T>('POST', path, body, caller);
  }

  /** A read (checkout looking a product up in the catalog); same breaker, same rules. */
  get<T>(path: string, caller: CallerIdentity): Promise<InternalResponse<T>> {
    return this.fire<T>('GET', path, undefined, caller);
  }

  private async fire<T>(method: Method, path: string, body: unknown, caller: CallerIdentity) {
    try {
      const tenant = `${caller.organization}:${caller.environment}`;
      return (await this.breaker.fire(tenant, method, path, body, caller)) as InternalResponse<T>;
    } catch (error) {
      throw new ApiError(503, 'service_unavailable', `${this.options.name} is unavailable`, undefined);
    }
  }

  /** Whether the breaker of the whole service is open (every tenant rejected at once). */
  get isOpen(): boolean {
    return this.breaker.upstream.opened;
  }

  /** Whether this tenant's own breaker is open. */
  isOpenFor(caller: Pick<CallerIdentity, 'organization' | 'environment'>): boolean {
    return this.breaker.callerBreaker(`${caller.organization}:${caller.environment}`)?.opened ?? false;
  }

  close(): void {
    this.breaker.shutdown();
  }

  private async send(
    method: Method,
    path: string,
    body: unknown,
    caller: CallerIdentity,
  ): Promise<InternalResponse<unknown>> {
    const url = new URL(`${this.options.baseUrl}${path}`);
    const text = method === 'POST' ? JSON.stringify(body) : undefined;
    // Signed as sent: fetch sends the URL's normalised path, which is what the service checks,
    // and this very text as the body.
    const signed = signInternalCall(this.options.secret, {
      scope: 'service',
      method,
      path: `${url.pathname}${url.search}`,
      identity: caller,
      body: text,
    });
    const response = await fetch(url, {
      method,
      headers: {
        ...(text !== undefined ? { 'content-type': 'application/json' } : {}),
        ...signed,
      },
      body: text,
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 1500),
    });
    const parsed = (await response.json().catch(() => undefined)) as unknown;
    // 5xx: the service did not do it; 502/503/504 (cannot serve now) also count as failures.
    if (response.status >= 500) throw new InternalStatusError(this.options.name, response.status);
    return { status: response.status, body: parsed };
  }
}
