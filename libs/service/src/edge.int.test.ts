import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { http, postJson } from '../test/http';
import { createApp, createLogger, startService, validate, type ServiceHandle } from './index';

/** The edge every service shares: text checks, one reading of a body, Node's own errors in the envelope. */
const logger = createLogger('edge-test', { level: 'silent' });
const effects: unknown[] = [];
const app = createApp({
  name: 'edge-test',
  logger,
  routes: (router) => {
    router.post('/things', validate({ body: z.object({ name: z.string().max(255) }).passthrough() }), (req, res) => {
      effects.push(req.body);
      res.status(201).json(req.body);
    });
    router.get('/things/:id', (req, res) => void res.json({ id: req.params.id, query: req.query }));
  },
});

let service: ServiceHandle;
beforeAll(async () => {
  service = await startService({ app, port: 0, logger, shutdownTimeoutMs: 1_000 });
});
afterAll(() => service.shutdown());
beforeEach(() => {
  effects.length = 0;
});
const url = (path: string) => `${service.url}${path}`;
const detailsOf = (body: any) => body.error.details.map((d: any) => `${d.path}: ${d.code}`);

/** Writes raw bytes and reads until the server closes the connection. */
function raw(payload: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(service.port, '127.0.0.1', () => socket.write(payload));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}
const envelopeOf = (answer: string) => JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4));

describe('text at the edge', () => {
  it.each([
    ['a NUL', 'Mei\u0000Lin'],
    ['a lone surrogate', 'Mei\uD800'],
    ['a control character', 'Mei\u001B[31m'],
    ['a line break in a name', 'Mei\nLin'],
  ])('refuses %s in a JSON body with 422 before the route runs', async (_what, name) => {
    const res = await postJson(url('/things'), { name });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: { code: 'validation_error' } });
    expect(detailsOf(res.body)).toEqual(['name: invalid_characters']);
    expect(effects).toEqual([]);
  });

  it('keeps line breaks in free text and any Unicode in names', async () => {
    const res = await postJson(url('/things'), { name: '陳美玲 😀', description: 'one\ntwo' });
    expect(res.status).toBe(201);
  });

  it('refuses a NUL in a query value or a path segment with 400 naming it', async () => {
    const query = await http(url('/things/x?email=a%00b'));
    expect([query.status, detailsOf(query.body)]).toEqual([400, ['email: invalid_characters']]);
    expect((query.body as any).error).toMatchObject({ code: 'bad_request', message: 'Invalid query parameter: email' });
    const path = await http(url('/things/a%00b'));
    expect([path.status, (path.body as any).error.code, detailsOf(path.body)]).toEqual([
      400,
      'bad_request',
      ['segment 2: invalid_characters'],
    ]);
    expect((await http(url('/things/a%0Ab'))).status).toBe(400);
    expect((await http(url('/things/ok?limit=10'))).status).toBe(200);
  });
});

describe('one reading of a JSON body', () => {
  it('refuses a leading byte-order mark with 400 (express.json alone would strip it)', async () => {
    const res = await http(url('/things'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"x"}')]),
    });
    expect([res.status, (res.body as any).error.code]).toEqual([400, 'bad_request']);
    expect((res.body as any).error.message).toMatch(/byte-order mark/);
    expect(effects).toEqual([]);
  });

  it('refuses a compressed body and a JSON body in another charset with 415', async () => {
    const gzip = await http(url('/things'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      body: gzipSync('{"name":"x"}'),
    });
    expect([gzip.status, (gzip.body as any).error.code]).toEqual([415, 'unsupported_media_type']);
    const utf16 = await http(url('/things'), {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-16le' },
      body: Buffer.from('{"name":"x"}', 'utf16le'),
    });
    expect([utf16.status, (utf16.body as any).error.code]).toEqual([415, 'unsupported_media_type']);
    const utf8 = await http(url('/things'), {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=UTF-8' },
      body: '{"name":"x"}',
    });
    expect(utf8.status).toBe(201);
    expect(effects).toHaveLength(1);
  });
});

describe("Node's own errors, in the envelope", () => {
  it('431 for headers over 16 KB', async () => {
    const answer = await raw(`GET /things/x HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 431 /);
    expect(answer).toMatch(/content-type: application\/json/i);
    expect(envelopeOf(answer)).toEqual({
      error: { code: 'request_header_fields_too_large', message: expect.any(String) },
    });
  });

  it('400 for a request that is not HTTP, or with both Content-Length and Transfer-Encoding', async () => {
    for (const payload of [
      'GARBAGE\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n',
      'POST /things HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
    ]) {
      const answer = await raw(payload);
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(envelopeOf(answer).error.code).toBe('bad_request');
    }
  });

  it('417 for an Expect other than 100-continue', async () => {
    const res = await http(url('/things/x'), { headers: { expect: 'teapot' } });
    expect([res.status, res.body]).toEqual([
      417,
      { error: { code: 'expectation_failed', message: expect.any(String) } },
    ]);
  });
});
