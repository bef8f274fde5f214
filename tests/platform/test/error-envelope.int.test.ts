import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { ServiceUnderTest } from '@billing/runtime';
import { clientOf, type CreatedOrganization, type Platform, startGateway, startPlatform } from '../src/platform';

/**
 * Every error in the envelope (issue 12, part 9): whatever answers, Node's HTTP parser, express,
 * the gateway, its proxy or a service, an error leaves as `{ error: { code, message } }` with a
 * JSON content type. The hosted pages are HTML for buyers and are not part of this.
 */
jest.setTimeout(60_000);

let platform: Platform;
let client: ReturnType<typeof clientOf>;
let org: CreatedOrganization;
let cutOff: ServiceUnderTest;

beforeAll(async () => {
  platform = await startPlatform({ promotions: true });
  client = clientOf(platform.gatewayUrl);
  org = await client.createOrganization('Envelope');
  // A second gateway whose notifications upstream is nowhere: the proxy's own failure.
  cutOff = await startGateway(
    platform.infrastructure,
    { NOTIFICATIONS_SERVICE_URL: 'http://127.0.0.1:9' },
    platform.gateway.service.context.store.tables.schema.replaceAll('"', ''),
  );
});
afterAll(async () => {
  await cutOff?.stop();
  await platform?.stop();
});

const key = () => org.api_keys.sandbox.secret_key;

interface Answer {
  status: number;
  contentType: string;
  body: any;
}

async function send(
  path: string,
  init: { method?: string; headers?: Record<string, string>; body?: string | Buffer } = {},
  base = platform.gatewayUrl,
): Promise<Answer> {
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? 'GET',
    headers: { authorization: `Bearer ${key()}`, ...init.headers },
    body: init.body,
  });
  const text = await response.text();
  return { status: response.status, contentType: response.headers.get('content-type') ?? '', body: JSON.parse(text) };
}

/** Raw bytes to the gateway; the whole answer until it closes the connection. */
function raw(payload: string): Promise<{ status: number; contentType: string; body: any }> {
  const { port, hostname } = new URL(platform.gatewayUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => socket.write(payload));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('error', reject);
    socket.on('end', () => {
      const [head, body] = [answer.slice(0, answer.indexOf('\r\n\r\n')), answer.slice(answer.indexOf('\r\n\r\n') + 4)];
      resolve({
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]),
        contentType: /content-type: ([^\r\n]+)/i.exec(head)?.[1] ?? '',
        body: body ? JSON.parse(body) : undefined,
      });
    });
  });
}

const envelope = (code: string) => ({ error: expect.objectContaining({ code, message: expect.any(String) }) });

describe('every error in the envelope, through the gateway', () => {
  it.each<[string, () => Promise<Answer>, number, string]>([
    [
      '431: headers over 16 KB',
      () => raw(`GET /v1/products HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`),
      431,
      'request_header_fields_too_large',
    ],
    ['400: a request line that is not HTTP', () => raw('GARBAGE\r\n\r\n'), 400, 'bad_request'],
    [
      '400: a malformed header',
      () => raw('GET /v1/products HTTP/1.1\r\nHost: x\r\nno colon\r\n\r\n'),
      400,
      'bad_request',
    ],
    [
      '400: Content-Length and Transfer-Encoding together',
      () =>
        raw('POST /v1/coupons HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
      400,
      'bad_request',
    ],
    [
      '417: an Expect other than 100-continue',
      () => raw('GET /v1/products HTTP/1.1\r\nHost: x\r\nExpect: teapot\r\n\r\n'),
      417,
      'expectation_failed',
    ],
    ['404: an unknown route under /v1', () => send('/v1/nothing-here'), 404, 'not_found'],
    ['404: an unknown route outside /v1', () => send('/nothing-here'), 404, 'not_found'],
    ['404: a method a route does not take', () => send('/v1/products', { method: 'PUT' }), 404, 'not_found'],
    ['400: a path that does not decode', () => send('/v1/products/%E0%A4%A'), 400, 'bad_request'],
    ['401: no API key', () => send('/v1/products', { headers: { authorization: '' } }), 401, 'unauthorized'],
    [
      '400: malformed JSON (the service)',
      () => send('/v1/coupons', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' }),
      400,
      'bad_request',
    ],
    [
      '413: a POST body over 1 MB (the gateway)',
      () =>
        send('/v1/coupons', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'x'.repeat(1_100_000) }),
        }),
      413,
      'payload_too_large',
    ],
    [
      '413: a PATCH body over 100 KB (the service)',
      () =>
        send('/v1/coupons/cpn_x', {
          method: 'PATCH',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'x'.repeat(200_000) }),
        }),
      413,
      'payload_too_large',
    ],
    [
      '415: a compressed body',
      () =>
        send('/v1/coupons', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          body: gzipSync('{}'),
        }),
      415,
      'unsupported_media_type',
    ],
    [
      '400: a body behind a byte-order mark',
      () =>
        send('/v1/coupons', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{}')]),
        }),
      400,
      'bad_request',
    ],
    [
      '503: an upstream that is down (the proxy)',
      () => send('/v1/webhooks', {}, cutOff.service.url),
      503,
      'service_unavailable',
    ],
  ])('%s', async (_name, call, status, code) => {
    const answer = await call();
    expect(answer.status).toBe(status);
    expect(answer.contentType).toMatch(/^application\/json/);
    expect(answer.body).toEqual(envelope(code));
  });
});
