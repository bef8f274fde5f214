import fc from 'fast-check';

/** A JSON Schema node as the OpenAPI document has it (zod's output). */
export type JsonSchema = {
  $ref?: string;
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
};

/** Strings that have broken services before: NUL, lone surrogates, controls, odd lengths, injections. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\uD800',
    'x\uDFFFy',
    '\u0007bell',
    '\u001b[31mred',
    '\u202Eevil',
    '\uFEFFbom',
    '💳',
    'null',
    '../../etc/passwd',
    "' OR 1=1 --",
    '<script>alert(1)</script>',
    '%00',
    '{CHECKOUT_SESSION_ID}',
    `cus_${'A'.repeat(24)}`,
    'x'.repeat(300),
    'y'.repeat(5000),
  ),
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
);

/** Any JSON value, of any type: what a field gets when a client sends the wrong thing. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  hostileString,
  fc.constantFrom(-1, 0, 1, 2 ** 31, Number.MAX_SAFE_INTEGER + 2, 1e308, -0.5),
  fc.array(fc.integer(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 3 }),
);

/**
 * Values for one schema node: mostly of the documented shape (at and past its bounds, ids the
 * fixtures know), sometimes anything at all.
 */
export function arbitraryFor(
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
  knownIds: string[],
  depth = 0,
): fc.Arbitrary<unknown> {
  const shaped = shapedFor(schema, components, knownIds, depth);
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: anyJson });
}

function shapedFor(
  schema: JsonSchema,
  components: Record<string, JsonSchema>,
  knownIds: string[],
  depth: number,
): fc.Arbitrary<unknown> {
  const next = (s: JsonSchema) => arbitraryFor(s, components, knownIds, depth + 1);
  if (schema.$ref) return shapedFor(components[schema.$ref.split('/').pop()!] ?? {}, components, knownIds, depth);
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.oneof(fc.constantFrom(...schema.enum), hostileString);
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) return fc.oneof(...alternatives.map(next));
  if (schema.allOf) return next(Object.assign({}, ...schema.allOf));
  const type = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  if (type.length > 1)
    return fc.oneof(...type.map((t) => shapedFor({ ...schema, type: t }, components, knownIds, depth)));
  switch (type[0]) {
    case 'string':
      return stringFor(schema, knownIds);
    case 'integer':
    case 'number':
      return numberFor(schema);
    case 'boolean':
      return fc.oneof(fc.boolean(), fc.constantFrom('true', 'false', 0, 1));
    case 'null':
      return fc.constant(null);
    case 'array':
      return depth > 3 ? fc.constant([]) : fc.array(next(schema.items ?? {}), { maxLength: 4 });
    case 'object':
      return depth > 3 ? fc.constant({}) : objectFor(schema, next);
    default:
      return anyJson;
  }
}

function stringFor(schema: JsonSchema, knownIds: string[]): fc.Arbitrary<string> {
  const options: fc.Arbitrary<string>[] = [hostileString];
  if (schema.format === 'date-time') {
    options.push(fc.date({ noInvalidDate: true }).map((d) => d.toISOString()));
  } else if (schema.pattern) {
    options.push(fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= 300));
  } else {
    const max = schema.maxLength ?? 50;
    options.push(fc.string({ minLength: schema.minLength ?? 0, maxLength: Math.min(max, 60) }));
    if (schema.maxLength !== undefined) options.push(fc.constant('m'.repeat(schema.maxLength + 1)));
  }
  if (knownIds.length > 0) options.push(fc.constantFrom(...knownIds));
  options.push(
    fc.constantFrom('https://shop.example/ok', 'http://shop.example/x', 'https://127.0.0.1/a', 'mei@example.com'),
  );
  return fc.oneof(...options);
}

function numberFor(schema: JsonSchema): fc.Arbitrary<number> {
  const min = schema.minimum ?? schema.exclusiveMinimum ?? -1e6;
  const max = schema.maximum ?? schema.exclusiveMaximum ?? 1e6;
  const inRange = fc.integer({ min: Math.max(min, -1e9), max: Math.min(max, 1e9) });
  return fc.oneof(inRange, fc.constantFrom(min - 1, max + 1, min, max, 0, -1, 1.5, 2 ** 53 + 2));
}

function objectFor(schema: JsonSchema, next: (s: JsonSchema) => fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  const record = fc.record(Object.fromEntries(names.map((n) => [n, next(properties[n]!)])), {
    requiredKeys: (schema.required ?? []).filter((n) => names.includes(n)),
  });
  // Sometimes a required field is missing, sometimes an unknown one is added.
  return fc
    .tuple(record, fc.nat({ max: 9 }), fc.string({ maxLength: 8 }), anyJson)
    .map(([value, roll, extra, extraValue]) => {
      const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
      if (roll === 0 && names.length > 0) delete out[names[0]!];
      if (roll === 1) out[`x_${extra}`] = extraValue;
      return out;
    });
}

/** A path segment: a fixture id or anything, percent-encoded; raw bytes where encoding cannot express it. */
export function pathSegment(knownIds: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(...knownIds, 'missing'),
    hostileString.map((s) => {
      try {
        return encodeURIComponent(s);
      } catch {
        return '%ED%A0%80'; // a lone surrogate as UTF-8 bytes: not valid UTF-8
      }
    }),
    fc.constantFrom('%00', '%FF%FE', '%C0%AF', '..%2F..', '%2e%2e', 'a%20b', '%E2%80%AE'),
  );
}

/** A query value: the parameter's shape or anything, as text. */
export function queryValue(schema: JsonSchema, components: Record<string, JsonSchema>, knownIds: string[]) {
  return fc.option(
    arbitraryFor(schema, components, knownIds).map((v) => (typeof v === 'string' ? v : JSON.stringify(v))),
    { nil: undefined, freq: 3 },
  );
}

/** A raw body: mostly JSON of the schema's shape, sometimes malformed or not JSON at all. */
export function rawBody(body: fc.Arbitrary<unknown>): fc.Arbitrary<{ text: string; contentType: string }> {
  const json = 'application/json';
  return fc.oneof(
    { weight: 8, arbitrary: body.map((v) => ({ text: safeStringify(v), contentType: json })) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        { text: '{', contentType: json },
        { text: '', contentType: json },
        { text: 'null', contentType: json },
        { text: '[]', contentType: json },
        { text: '"text"', contentType: json },
        { text: '\uFEFF{}', contentType: json },
        { text: '{"a":1,"a":2}', contentType: json },
        { text: `${'['.repeat(5000)}${']'.repeat(5000)}`, contentType: json },
        { text: 'code=ABC', contentType: 'application/x-www-form-urlencoded' },
        { text: '{}', contentType: 'text/plain' },
      ),
    },
    { weight: 1, arbitrary: body.map((v) => ({ text: `\uFEFF${safeStringify(v)}`, contentType: json })) },
  );
}

/** JSON.stringify keeps lone surrogates as escapes (well-formed JSON), which is what a client would send. */
const safeStringify = (value: unknown) => JSON.stringify(value) ?? 'null';
