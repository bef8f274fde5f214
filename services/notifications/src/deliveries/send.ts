import { type SignedHeaders } from './sign';

export interface AttemptResult {
  responseStatus: number | null;
  durationMs: number;
  error: string | null;
}

/**
 * One POST with a deadline. Redirects are not followed (a 3xx is a failure, as for other
 * senders of Standard Webhooks); the answer's body is read and dropped so the socket is freed.
 */
export async function sendWebhook(
  url: string,
  body: string,
  headers: SignedHeaders,
  timeoutMs: number,
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => performance.now() - started;
  try {
    const response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', 'user-agent': 'billing-webhooks/1', ...headers },
      body,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.arrayBuffer().catch(() => undefined);
    const ok = response.status >= 200 && response.status < 300;
    return { responseStatus: response.status, durationMs: elapsed(), error: ok ? null : `HTTP ${response.status}` };
  } catch (error) {
    const name = (error as Error).name;
    const reason =
      name === 'TimeoutError' || name === 'AbortError'
        ? `timeout after ${timeoutMs} ms`
        : `connection error: ${causeOf(error)}`;
    return { responseStatus: null, durationMs: elapsed(), error: reason };
  }
}

function causeOf(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}
