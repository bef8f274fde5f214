import { lookup as dnsLookup } from 'node:dns/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { Environment } from '@billing/contracts';
import { type TargetPolicy, addressOf, checkResolved, checkTarget } from '../targets/address-policy';
import { type SignedHeaders } from './sign';

export interface AttemptResult {
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Every address of a host name, as the operating system resolves it. Injected in tests. */
export type Resolve = (hostname: string) => Promise<ResolvedAddress[]>;

export const systemResolve: Resolve = async (hostname) =>
  (await dnsLookup(hostname, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

export interface SenderOptions {
  /** Deadline of one attempt, resolution included. */
  timeoutMs: number;
  policy: TargetPolicy;
  resolve?: Resolve;
}

export interface WebhookSender {
  send(url: string, environment: Environment, body: string, headers: SignedHeaders): Promise<AttemptResult>;
  /** Closes the pooled connections. */
  close(): void;
}

/** Connection pools, one per checked address (bounded): a pooled socket only ever leads there. */
const MAX_POOLS = 256;

/**
 * Sends webhooks only where the address policy allows (`../targets/address-policy.ts`,
 * docs/webhooks.md), checked again at every attempt:
 *
 * 1. The URL's scheme and host (an address in any spelling, or a name) are checked: an endpoint
 *    registered before a rule, or under another setting, is refused here too.
 * 2. A host name is resolved here, and every address it resolves to is checked.
 * 3. The request connects to the first checked address and to nothing else: the connection's
 *    `lookup` answers that address instead of asking DNS again, so a name that resolves to a
 *    public address for the check and to a private one for the connection (DNS rebinding)
 *    still reaches the public one. TLS still verifies the certificate against the host name.
 *
 * A refused target is recorded as a failed attempt (`refused: ...`) without any connection to
 * it. Redirects are not followed (a 3xx is a failure, as for other senders of Standard
 * Webhooks); the answer's body is read and dropped so the socket is freed.
 */
export function createWebhookSender(options: SenderOptions): WebhookSender {
  const resolve = options.resolve ?? systemResolve;
  const pools = new Map<string, http.Agent>();

  /** The keep-alive pool for one protocol and one checked address. */
  function poolFor(protocol: string, target: ResolvedAddress): http.Agent {
    const key = `${protocol}//${target.address}`;
    let agent = pools.get(key);
    if (agent) {
      // Most recently used last, so the first one is the one to drop.
      pools.delete(key);
      pools.set(key, agent);
      return agent;
    }
    agent = protocol === 'https:' ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
    pools.set(key, agent);
    if (pools.size > MAX_POOLS) {
      const [oldest] = pools.keys();
      pools.get(oldest!)?.destroy();
      pools.delete(oldest!);
    }
    return agent;
  }

  async function send(
    url: string,
    environment: Environment,
    body: string,
    headers: SignedHeaders,
  ): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => performance.now() - started;
    const refused = (reason: string): AttemptResult => ({
      responseStatus: null,
      durationMs: elapsed(),
      error: `refused: ${reason}`,
    });
    const { timeoutMs, policy } = options;
    const deadline = AbortSignal.timeout(timeoutMs);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return refused('not an absolute URL');
    }
    const problem = checkTarget(parsed, environment, policy);
    if (problem) return refused(problem.reason);

    let target: ResolvedAddress;
    const literal = addressOf(parsed);
    if (literal) {
      target = { address: literal, family: literal.includes(':') ? 6 : 4 };
    } else {
      let addresses: ResolvedAddress[];
      try {
        addresses = await withDeadline(resolve(parsed.hostname), deadline);
      } catch (error) {
        if (deadline.aborted)
          return { responseStatus: null, durationMs: elapsed(), error: `timeout after ${timeoutMs} ms` };
        return { responseStatus: null, durationMs: elapsed(), error: `dns error: ${codeOf(error)}` };
      }
      const resolvedProblem = checkResolved(
        parsed.hostname,
        addresses.map((a) => a.address),
        environment,
        policy,
      );
      if (resolvedProblem) return refused(resolvedProblem.reason);
      target = addresses[0]!;
    }

    try {
      const status = await postResendingIfStale(
        parsed,
        target,
        poolFor(parsed.protocol, target),
        body,
        headers,
        deadline,
      );
      const ok = status >= 200 && status < 300;
      return { responseStatus: status, durationMs: elapsed(), error: ok ? null : `HTTP ${status}` };
    } catch (error) {
      const reason = deadline.aborted ? `timeout after ${timeoutMs} ms` : `connection error: ${codeOf(error)}`;
      return { responseStatus: null, durationMs: elapsed(), error: reason };
    }
  }

  return {
    send,
    close: () => {
      for (const agent of pools.values()) agent.destroy();
      pools.clear();
    },
  };
}

/**
 * A pooled connection the endpoint closed as it sat idle (its keep-alive timeout) can meet the
 * request on its way: the request fails on that reused socket before any answer, and the
 * endpoint never read it. It is sent once more on a new connection, as Node's documentation
 * advises, rather than counted as a failed attempt that waits minutes for its retry.
 */
async function postResendingIfStale(
  url: URL,
  target: ResolvedAddress,
  agent: http.Agent,
  body: string,
  headers: SignedHeaders,
  deadline: AbortSignal,
): Promise<number> {
  try {
    return await post(url, target, agent, body, headers, deadline);
  } catch (error) {
    if (!(error instanceof StaleSocketError) || deadline.aborted) throw error;
    return post(url, target, false, body, headers, deadline);
  }
}

/** The request failed on a reused keep-alive socket before any answer came. */
class StaleSocketError extends Error {
  constructor(cause: unknown) {
    super('a reused connection closed before an answer', { cause });
  }
}

const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE']);

/** One POST to `url`, connected to `target` whatever DNS says now (`agent` false: a connection of its own). Resolves to the status. */
function post(
  url: URL,
  target: ResolvedAddress,
  agent: http.Agent | false,
  body: string,
  headers: SignedHeaders,
  deadline: AbortSignal,
): Promise<number> {
  // The pinned address, in the shape net.connect asks for (`all` with autoSelectFamily).
  const pinned = ((_hostname: string, lookupOptions: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (lookupOptions?.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
  const request = url.protocol === 'https:' ? https.request : http.request;
  return new Promise<number>((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        lookup: pinned,
        signal: deadline,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          'user-agent': 'billing-webhooks/1',
          ...headers,
        },
      },
      (res: IncomingMessage) => {
        res.on('error', reject);
        res.on('end', () => resolve(res.statusCode ?? 0));
        res.resume();
      },
    );
    let answered = false;
    req.once('response', () => (answered = true));
    req.on('error', (error: NodeJS.ErrnoException) => {
      const stale = req.reusedSocket && !answered && STALE_SOCKET_CODES.has(error.code ?? '');
      reject(stale ? new StaleSocketError(error) : error);
    });
    req.end(body);
  });
}

function withDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(deadline.reason);
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(deadline.reason);
    deadline.addEventListener('abort', abort, { once: true });
    work.then(resolve, reject).finally(() => deadline.removeEventListener('abort', abort));
  });
}

function codeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const code = (error as { code?: string }).code;
  return cause?.code ?? code ?? cause?.message ?? (error as Error).message;
}
