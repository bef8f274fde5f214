import http from 'node:http';
import { type Platform, startPlatform } from '../src/platform';

jest.setTimeout(60000);

interface Reply {
  status: number;
  location: string | undefined;
}

/** Sends the cookie header as raw bytes (fetch refuses some of them before they leave). */
function send(baseUrl: string, method: 'GET' | 'POST', path: string, cookie: string): Promise<Reply> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        hostname,
        port,
        method,
        path,
        headers: { cookie, ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      },
      (response) => {
        response.resume();
        response.once('end', () => resolve({ status: response.statusCode!, location: response.headers.location }));
      },
    );
    request.once('error', reject);
    request.end(method === 'POST' ? '_csrf=x' : undefined);
  });
}

/** UTF-8 bytes as a header value (Node writes header strings as latin1). */
const utf8Bytes = (text: string) => Buffer.from(text, 'utf8').toString('latin1');

/**
 * Issue 26, item 11: whatever the dashboard's cookies hold, a visitor without a valid session
 * is signed out (GET: to the login page; POST: 401), never a 500.
 */
describe('malformed dashboard cookies', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform();
  });
  afterAll(() => platform?.stop());

  const MALFORMED: Array<[string, string]> = [
    ['bad percent-encoding', 'dashboard_session=%E0%A4%A'],
    ['a lone percent sign', 'dashboard_session=%'],
    ['an encoded invalid UTF-8 sequence', 'dashboard_session=%C3%28'],
    ['bad base64', 'dashboard_session=!!!not*base64==='],
    ['a forged signature', 'dashboard_session=eyJ1c2VyIjoiYWRtaW4ifQ.c2lnbmF0dXJl'],
    ['JSON', 'dashboard_session={"principal":"operator"}'],
    ['non-ASCII bytes', `dashboard_session=${utf8Bytes('sessión-ü-日本')}`],
    ['latin1 bytes', 'dashboard_session=\xff\xfe\xe9'],
    ['a huge value', `dashboard_session=${'A'.repeat(8000)}`],
    ['an empty value', 'dashboard_session='],
    ['no value', 'dashboard_session'],
    ['the name twice', 'dashboard_session=a; dashboard_session=%zz'],
    ['a malformed notice and CSRF cookie', 'dashboard_notice=%E0%A4%A; dashboard_login_csrf=%'],
  ];

  it.each(MALFORMED)('%s: GET redirects to the login page', async (_name, cookie) => {
    const reply = await send(platform.gatewayUrl, 'GET', '/dashboard/org_x/sandbox', cookie);
    expect(reply).toEqual({ status: 303, location: '/dashboard/login' });
  });

  it.each(MALFORMED)('%s: POST answers signed out', async (_name, cookie) => {
    expect((await send(platform.gatewayUrl, 'POST', '/dashboard/org_x/sandbox/products', cookie)).status).toBe(401);
  });

  it.each(MALFORMED)('%s: the login page still opens and its form still posts', async (_name, cookie) => {
    expect((await send(platform.gatewayUrl, 'GET', '/dashboard/login', cookie)).status).toBe(200);
    // The CSRF cookie is unreadable or absent: the form post is refused as forged, not a 500.
    expect((await send(platform.gatewayUrl, 'POST', '/dashboard/login', cookie)).status).toBe(403);
  });
});
