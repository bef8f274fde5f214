import type { Environment } from '@billing/contracts';
import { type CredentialSigner, DASHBOARD_CREDENTIAL_HEADER, type DashboardActor } from './loopback';

/** An answer of the API that was not a success, with the envelope's message and field details. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Array<{ path?: string; message?: string; code?: string }> = [],
  ) {
    super(message);
  }

  /** The message, with each field problem after it that says more: what the page shows next to the form. */
  get explanation(): string {
    return this.explainedAs(this.message, (d) => d.message ?? '', { around: [' (', ')'], path: ': ', between: '; ' });
  }

  /**
   * `summary`, then each field problem that says more than the message (`problem` of it, after
   * its path), in `marks`: how a page words a refusal.
   */
  explainedAs(summary: string, problem: (detail: ApiFailure['details'][number]) => string, marks: RefusalMarks) {
    const fields = this.details
      .filter((d) => d.message && d.message !== this.message)
      .map((d) => (d.path ? `${d.path}${marks.path}${problem(d)}` : problem(d)));
    return fields.length ? `${summary}${marks.around[0]}${fields.join(marks.between)}${marks.around[1]}` : summary;
  }
}

/** The punctuation of a refusal's field problems: around them, after a path, between two. */
export type RefusalMarks = { around: [string, string]; path: string; between: string };

export interface CallOptions {
  idempotencyKey?: string;
}

type Query = Record<string, string | number | boolean | undefined>;

export const withQuery = (path: string, query: Query = {}) => {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(name, String(value));
  const text = params.toString();
  return text ? `${path}${path.includes('?') ? '&' : '?'}${text}` : path;
};

/**
 * Calls the gateway it runs in, as one organization in one environment, on behalf of one
 * dashboard user (or the operator).
 */
export class GatewayClient {
  constructor(
    private readonly baseUrl: string,
    private readonly signer: CredentialSigner,
    private readonly adminToken: string,
    readonly organization: string,
    readonly environment: Environment,
    private readonly actor: DashboardActor,
  ) {}

  /** The public API as the organization's Secret Key in this environment. */
  v1<T = any>(method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
    return this.call(`/v1${path}`, method, body, options);
  }

  /** The admin API under this organization: `/admin/v1/organizations/<org><path>`. */
  admin<T = any>(method: string, path: string, body?: unknown, options: CallOptions = {}): Promise<T> {
    return this.call(`/admin/v1/organizations/${encodeURIComponent(this.organization)}${path}`, method, body, options);
  }

  private async call<T>(path: string, method: string, body: unknown, options: CallOptions): Promise<T> {
    const credential = this.signer.sign({
      organization: this.organization,
      environment: this.environment,
      actor: this.actor,
    });
    const headers: Record<string, string> = {
      [DASHBOARD_CREDENTIAL_HEADER]: credential,
      accept: 'application/json',
    };
    if (path.startsWith('/admin/')) headers.authorization = `Bearer ${this.adminToken}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const parsed = text ? safeJson(text) : undefined;
    if (!response.ok) {
      const error = (parsed as { error?: { code?: string; message?: string; details?: any[] } } | undefined)?.error;
      throw new ApiFailure(
        response.status,
        error?.code ?? 'error',
        error?.message ?? `The request failed (${response.status})`,
        Array.isArray(error?.details) ? error.details : [],
      );
    }
    return parsed as T;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
