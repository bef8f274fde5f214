import { ApiError, type CallerIdentity, identityHeaders } from '@billing/contracts';
import CircuitBreaker from 'opossum';

export interface InternalClientOptions {
  /** The service called, for messages and the breaker's name. */
  name: string;
  baseUrl: string;
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

/**
 * Calls another service's internal API now, when an answer is needed at once (checkout
 * reserving a promotion code). Behind one opossum breaker per client: a service that is down,
 * slow or failing answers `503 service_unavailable` within the timeout, and at once while the
 * breaker is open, so the caller can degrade with a clear error instead of hanging. The
 * service's own 4xx answers are returned, not thrown, and do not count as failures.
 */
export class InternalClient {
  private readonly breaker: CircuitBreaker<[Method, string, unknown, CallerIdentity], InternalResponse<unknown>>;

  constructor(private readonly options: InternalClientOptions) {
    this.breaker = new CircuitBreaker(
      (method: Method, path: string, body: unknown, caller: CallerIdentity) => this.send(method, path, body, caller),
      {
        name: options.name,
        timeout: options.timeoutMs ?? 1500,
        resetTimeout: options.resetTimeoutMs ?? 1000,
        errorThresholdPercentage: 50,
        volumeThreshold: 3,
        rollingCountTimeout: 10_000,
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
      return (await this.breaker.fire(method, path, body, caller)) as InternalResponse<T>;
    } catch (error) {
      throw new ApiError(503, 'service_unavailable', `${this.options.name} is unavailable`, undefined);
    }
  }

  get isOpen(): boolean {
    return this.breaker.opened;
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
    const response = await fetch(`${this.options.baseUrl}${path}`, {
      method,
      headers: {
        ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
        ...identityHeaders(caller),
      },
      body: method === 'POST' ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(this.options.timeoutMs ?? 1500),
    });
    const parsed = (await response.json().catch(() => undefined)) as unknown;
    // 5xx means the service cannot serve: a failure for the breaker.
    if (response.status >= 500) throw new Error(`${this.options.name} answered ${response.status}`);
    return { status: response.status, body: parsed };
  }
}
