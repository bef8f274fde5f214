import { z } from 'zod';
import {
  ApiError,
  DomainEventEnvelope,
  ErrorEnvelope,
  OpenApiRegistry,
  detailsFromZodIssues,
  idTimePart,
  inSchemaOrder,
  isIdOf,
  listEnvelope,
  newId,
  randomBase62,
  toList,
  validationError,
} from './index';

describe('ids', () => {
  it('are the kind prefix and 24 base62 characters', () => {
    const id = newId('customer');
    expect(id).toMatch(/^cus_[0-9A-Za-z]{24}$/);
    expect(isIdOf('customer', id)).toBe(true);
    expect(isIdOf('product', id)).toBe(false);
    expect(newId('portalSession')).toMatch(/^portal_session_[0-9A-Za-z]{24}$/);
  });

  it('do not repeat across many draws', () => {
    const ids = new Set(Array.from({ length: 20000 }, () => newId('order')));
    expect(ids.size).toBe(20000);
  });

  it('made a second later sort after, in byte order and in a language collation alike', () => {
    const at = Date.UTC(2026, 10, 27, 12, 0, 0);
    const earlier = Array.from({ length: 50 }, () => newId('subscription', at));
    const later = Array.from({ length: 50 }, () => newId('subscription', at + 1000));
    const english = new Intl.Collator('en');
    for (const a of earlier) {
      for (const b of later) {
        expect(a < b).toBe(true);
        expect(english.compare(a, b)).toBeLessThan(0);
      }
    }
    expect(newId('subscription', at).slice(4, 11)).toBe(idTimePart(at));
    // The time part keeps its width, so that the order holds across the years.
    expect(idTimePart(0)).toBe('0000000');
    expect(idTimePart(Date.UTC(4400, 0, 1))).toHaveLength(7);
  });

  it('use every base62 character roughly evenly (no modulo bias towards the first ones)', () => {
    const counts = new Map<string, number>();
    for (const ch of randomBase62(62 * 2000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const count of counts.values()) {
      expect(count).toBeGreaterThan(1600);
      expect(count).toBeLessThan(2400);
    }
  });
});

describe('error envelope', () => {
  it('carries code, message and details in the spec shape', () => {
    const error = validationError([{ path: 'price', message: 'Too small', code: 'too_small' }]);
    expect(error.status).toBe(422);
    const envelope = error.toEnvelope();
    expect(ErrorEnvelope.parse(envelope)).toEqual({
      error: {
        code: 'validation_error',
        message: 'Request validation failed',
        details: [{ path: 'price', message: 'Too small', code: 'too_small' }],
      },
    });
  });

  it('omits empty details and adds type for portal errors', () => {
    expect(ApiError.of('not_found', 'No such product').toEnvelope()).toEqual({
      error: { code: 'not_found', message: 'No such product' },
    });
    const portal = new ApiError(
      400,
      'invalid_param',
      'customer_id, email or external_id is required',
      undefined,
      'invalid_request_error',
    );
    expect(portal.toEnvelope().error.type).toBe('invalid_request_error');
  });

  it('maps zod issues to {path, message, code}', () => {
    const result = z
      .object({ price: z.number().int().min(0), tags: z.array(z.string()) })
      .safeParse({ price: -1, tags: [3] });
    expect(result.success).toBe(false);
    const details = detailsFromZodIssues(result.error!.issues);
    expect(details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'price', code: 'too_small' }),
        expect.objectContaining({ path: 'tags.0', code: 'invalid_type' }),
      ]),
    );
  });
});

describe('envelopes', () => {
  it('list envelope wraps data with object and livemode', () => {
    const schema = listEnvelope(z.object({ id: z.string() }));
    expect(schema.parse(toList([{ id: 'a' }], false))).toEqual({
      object: 'list',
      data: [{ id: 'a' }],
      livemode: false,
    });
  });

  it('domain event envelope accepts a complete event and rejects a partial one', () => {
    const event = {
      id: '5b0f4f4e-2a4b-4c1e-9d7a-0c6f1c2b3a4d',
      type: 'ProductCreated',
      schema_version: 1,
      stream: 'product-prod_1',
      stream_version: 1,
      global_position: 7,
      occurred_at: '2026-11-21T01:00:00.000Z',
      organization: 'org_1',
      environment: 'SANDBOX',
      data: { name: 'Pro' },
    };
    expect(DomainEventEnvelope.parse(event)).toEqual(event);
    expect(DomainEventEnvelope.safeParse({ ...event, environment: 'STAGING' }).success).toBe(false);
    const { global_position: _omitted, ...partial } = event;
    expect(DomainEventEnvelope.safeParse(partial).success).toBe(false);
  });
});

describe('OpenAPI registry', () => {
  it('generates an OpenAPI 3.1 document with paths, parameters and shared components', () => {
    const Product = z.object({ id: z.string(), price: z.number().int() }).meta({ id: 'ProductForTest' });
    const registry = new OpenApiRegistry().route({
      method: 'get',
      path: '/products/{id}',
      summary: 'Retrieve a product',
      security: ['secretKey'],
      params: z.object({ id: z.string() }),
      query: z.object({ expand: z.string().optional() }),
      responses: {
        200: { description: 'The product', schema: Product },
        404: { description: 'Absent', schema: ErrorEnvelope },
      },
    });
    const doc = registry.toOpenApi({ title: 'Billing API', version: '1.0.0', serverUrl: 'http://localhost/v1' });
    expect(doc.openapi).toBe('3.1.0');
    const op = doc.paths['/products/{id}']!.get as any;
    expect(op.parameters).toEqual([
      { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
      { name: 'expand', in: 'query', required: false, schema: { type: 'string' } },
    ]);
    expect(op.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/ProductForTest',
    });
    expect(op.responses['404'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/Error' });
    expect(doc.components.schemas).toHaveProperty('ProductForTest.properties.price.type', 'integer');
    expect(JSON.stringify(doc)).not.toContain('$defs');
  });
});

describe('inSchemaOrder', () => {
  const Resource = z.object({
    object: z.literal('thing'),
    id: z.string(),
    nested: z.object({ b: z.int(), a: z.int() }),
  });

  it('puts the keys in the order of the schema, nested objects included (as jsonb does not)', () => {
    const fromJsonb = { id: 'thg_1', nested: { a: 1, b: 2 }, object: 'thing' };
    const ordered = inSchemaOrder(Resource, fromJsonb);
    expect(JSON.stringify(ordered)).toBe('{"object":"thing","id":"thg_1","nested":{"b":2,"a":1}}');
  });

  it('returns a value the schema refuses unchanged', () => {
    const odd = { id: 7, object: 'thing' };
    expect(inSchemaOrder(Resource, odd)).toBe(odd);
  });
});
