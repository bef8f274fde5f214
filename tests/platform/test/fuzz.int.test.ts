import fc from 'fast-check';
import { publicApiDocument } from '@billing/gateway';
import { type JsonSchema, arbitraryFor, pathSegment, queryValue, rawBody } from '../src/fuzz/arbitraries';
import {
  clientOf,
  type CreatedOrganization,
  eventsAppendedByRequests,
  type Platform,
  plan,
  startPlatform,
} from '../src/platform';

/**
 * Malformed and boundary input to every route of the OpenAPI document (and the hosted page's
 * pay calls), through the gateway: no 5xx, no hang, every error in the envelope, and a refused
 * request changes nothing (no service appends an event). FUZZ_RUNS sets the cases per route
 * (a bounded number in CI; e.g. FUZZ_RUNS=500 for a long run).
 */
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
const REQUEST_TIMEOUT_MS = 15_000;
jest.setTimeout(Math.max(600_000, RUNS * 40_000));

type Operation = {
  method: string;
  path: string;
  parameters: Array<{ name: string; in: 'path' | 'query'; schema: JsonSchema }>;
  body?: JsonSchema;
  publishable: boolean;
};

type Sent = { method: string; url: string; body?: string; contentType?: string; key: string };
type Answer = { status: number; text: string };

const document = publicApiDocument() as unknown as {
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, JsonSchema> };
};
const components = document.components.schemas;

function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
        publishable: (op.security ?? []).some((s: object) => 'publishableKey' in s),
      });
    }
  }
  return out;
}

/** A refusal answers before any effect; 402 is a processed (declined) payment, not a refusal. */
const isRefusal = (status: number) => status >= 400 && status < 500 && status !== 402;

describe('fuzzing every public route through the gateway', () => {
  let platform: Platform;
  let org: CreatedOrganization;
  const knownIds: string[] = [];
  let openSessionId: string;
  const failures: string[] = [];

  /** Events appended on behalf of a request by every service so far: a refused request must not move it. */
  async function eventCounts(): Promise<number[]> {
    const services = [
      platform.catalog,
      platform.promotions,
      platform.checkout,
      platform.billing,
      platform.notifications,
    ];
    return Promise.all(services.map((s) => eventsAppendedByRequests(s!.service.context.store)));
  }

  async function send(request: Sent): Promise<Answer | 'hang'> {
    try {
      const response = await fetch(request.url, {
        method: request.method,
        headers: {
          authorization: `Bearer ${request.key}`,
          ...(request.contentType ? { 'content-type': request.contentType } : {}),
        },
        body: request.body,
        redirect: 'manual',
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      return { status: response.status, text: await response.text() };
    } catch (error) {
      if ((error as Error).name === 'TimeoutError') return 'hang';
      throw error;
    }
  }

  /** What must hold of one answer; a description of the breach, or null. */
  function breach(request: Sent, answer: Answer | 'hang', moved: boolean): string | null {
    const what = `${request.method} ${request.url} ${JSON.stringify(request.body ?? '').slice(0, 200)}`;
    if (answer === 'hang') return `no answer within ${REQUEST_TIMEOUT_MS} ms: ${what}`;
    if (answer.status >= 500) return `${answer.status} ${answer.text.slice(0, 200)}: ${what}`;
    if (answer.status >= 400 && !isHtmlPage(request)) {
      let body: any;
      try {
        body = JSON.parse(answer.text);
      } catch {
        return `${answer.status} without a JSON body: ${what}`;
      }
      if (typeof body?.error?.code !== 'string' || typeof body?.error?.message !== 'string') {
        return `${answer.status} outside the error envelope (${answer.text.slice(0, 120)}): ${what}`;
      }
    }
    if (moved) return `refused with ${answer.status} but an event was appended: ${what}`;
    return null;
  }
  const isHtmlPage = (request: Sent) =>
    /\/checkout\/cs_[^/]*$/.test(new URL(request.url).pathname) || request.url.includes('/checkout/%');

  async function check(request: Sent) {
    const mutating = request.method !== 'GET';
    const before = mutating ? await eventCounts() : [];
    const answer = await send(request);
    const refused = answer !== 'hang' && isRefusal(answer.status);
    const moved = mutating && refused && JSON.stringify(await eventCounts()) !== JSON.stringify(before);
    const found = breach(request, answer, moved);
    if (found) failures.push(found);
    return found === null;
  }

  function requestFor(op: Operation): fc.Arbitrary<Sent> {
    const pathParams = op.parameters.filter((p) => p.in === 'path');
    const queryParams = op.parameters.filter((p) => p.in === 'query');
    const body = op.body ? rawBody(arbitraryFor(op.body, components, knownIds)) : fc.constant(undefined);
    const keys = op.publishable
      ? [org.api_keys.sandbox.secret_key, org.api_keys.sandbox.publishable_key]
      : [org.api_keys.sandbox.secret_key];
    return fc
      .record({
        path: fc.tuple(...pathParams.map(() => pathSegment(knownIds))),
        query: fc.tuple(...queryParams.map((p) => queryValue(p.schema, components, knownIds))),
        body,
        key: fc.constantFrom(...keys),
      })
      .map(({ path, query, body: raw, key }) => {
        let url = op.path;
        pathParams.forEach((p, i) => (url = url.replace(`{${p.name}}`, path[i]!)));
        const search = new URLSearchParams();
        queryParams.forEach((p, i) => {
          if (query[i] !== undefined) search.append(p.name, query[i]!);
        });
        const qs = search.toString();
        return {
          method: op.method,
          url: `${platform.gatewayUrl}/v1${url}${qs ? `?${qs}` : ''}`,
          body: raw?.text,
          contentType: raw?.contentType,
          key,
        };
      });
  }

  beforeAll(async () => {
    platform = await startPlatform({
      checkout: true,
      billing: true,
      notifications: true,
      config: { RATE_LIMIT_PER_MINUTE_OVERRIDE: '1000000' },
    });
    const client = clientOf(platform.gatewayUrl);
    org = await client.createOrganization('Fuzz');
    const sk = org.api_keys.sandbox.secret_key;
    const api = (method: string, path: string, body?: unknown) =>
      fetch(`${platform.gatewayUrl}/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${sk}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(async (r) => (await r.json()) as any);
    const product = (await client.createProduct(org.id, plan({ slug: 'pro' }))).body;
    const coupon = await api('POST', '/coupons', {
      name: 'Ten',
      discount_type: 'PERCENTAGE',
      discount_amount: 10,
      duration: 'once',
    });
    const code = await api('POST', '/promotion-codes', { coupon_id: coupon.id, code: 'FUZZ10' });
    const link = await api('POST', '/payment-links', { productId: product.id });
    const session = await api('POST', '/checkout/sessions', {
      product_id: product.id,
      success_url: 'https://shop.example/ok',
      cancel_url: 'https://shop.example/no',
      customer_email: 'fuzz@example.com',
      external_customer_id: 'fuzz_1',
    });
    openSessionId = session.id;
    knownIds.push(
      product.id,
      'pro',
      coupon.id,
      code.data.id,
      'FUZZ10',
      link.id,
      session.id,
      'fuzz_1',
      'fuzz@example.com',
    );
  });
  afterAll(async () => {
    await platform?.stop();
  });
  afterEach(() => {
    const found = failures.splice(0);
    if (found.length > 0) throw new Error(`${found.length} breaches:\n${[...new Set(found)].slice(0, 20).join('\n')}`);
  });

  for (const op of operations()) {
    it(`${op.method} ${op.path}`, async () => {
      await fc.assert(
        fc.asyncProperty(requestFor(op), (request) => check(request)),
        { numRuns: RUNS, endOnFailure: true },
      );
    });
  }

  it('POST /checkout/{id}/pay and the hosted page form', async () => {
    const card = fc.constantFrom('4242424242424242', '4000000000000002', '42', '', '4242 4242 4242 4242');
    const field = fc.oneof(
      fc.constantFrom(undefined),
      fc.string({ maxLength: 20 }),
      fc.constantFrom('a\u0000b', '\uD800', '\u0007', 'x'.repeat(400)),
    );
    const pay = fc
      .record({
        email: field,
        name: field,
        card_number: fc.oneof(card, field),
        exp: fc.oneof(fc.constantFrom('12/34', '13/99', '00/00'), field),
        cvc: fc.oneof(fc.constantFrom('123', '1'), field),
        form: fc.boolean(),
        session: fc.constantFrom(openSessionId, 'cs_missing', '%00'),
      })
      .map(({ form, session, ...fields }) => {
        const entries = Object.entries(fields).filter(([, v]) => v !== undefined) as [string, string][];
        return form
          ? {
              method: 'POST',
              url: `${platform.gatewayUrl}/checkout/${session}`,
              body: new URLSearchParams(entries).toString(),
              contentType: 'application/x-www-form-urlencoded',
              key: '',
            }
          : {
              method: 'POST',
              url: `${platform.gatewayUrl}/checkout/${session}/pay`,
              body: JSON.stringify(Object.fromEntries(entries)),
              contentType: 'application/json',
              key: '',
            };
      });
    await fc.assert(
      fc.asyncProperty(pay, (request) => check(request)),
      { numRuns: RUNS * 2, endOnFailure: true },
    );
  });
});
