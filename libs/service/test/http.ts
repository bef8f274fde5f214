import { request as httpRequest, type Agent, type IncomingHttpHeaders } from 'node:http';

export interface HttpResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** Parsed when the response is JSON. */
  body: unknown;
}

export interface HttpOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** `false` (the default) opens a fresh connection, so keep-alive pooling never hides a refusal. */
  agent?: Agent | false;
}

/** A tiny node:http client: tests need control over connections that fetch's pool does not give. */
export function http(url: string, options: HttpOptions = {}): Promise<HttpResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: options.method ?? 'GET', headers: options.headers, agent: options.agent ?? false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const json = (res.headers['content-type'] ?? '').includes('application/json');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            body: json ? JSON.parse(text) : undefined,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResponse> {
  return http(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `predicate` holds; for waiting on a server-side event the test cannot await. */
export async function until(predicate: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(5);
  }
}

/** A promise with its resolver, for handlers and checks that a test releases by hand. */
export function gate(): { promise: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}
