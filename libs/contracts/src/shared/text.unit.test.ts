import { z } from 'zod';
import * as contracts from '../index';

type JsonSchema = Record<string, any>;

/** Every string a schema accepts that has no upper bound, by dotted path. */
function unboundedStrings(
  schema: JsonSchema,
  path: string,
  defs: Record<string, JsonSchema>,
  seen: string[] = [],
): string[] {
  const found: string[] = [];
  if (!schema || typeof schema !== 'object') return found;
  if (typeof schema.$ref === 'string') {
    const id = schema.$ref.split('/').pop()!;
    return seen.includes(id) ? found : unboundedStrings(defs[id]!, path, defs, [...seen, id]);
  }
  const types = ([] as string[]).concat(schema.type ?? []);
  const bounded =
    schema.maxLength !== undefined || schema.enum || schema.const !== undefined || schema.format === 'date-time';
  if (types.includes('string') && !bounded) found.push(path);
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    for (const branch of schema[key] ?? []) found.push(...unboundedStrings(branch, path, defs, seen));
  for (const [name, property] of Object.entries(schema.properties ?? {}))
    found.push(...unboundedStrings(property as JsonSchema, `${path}.${name}`, defs, seen));
  if (typeof schema.additionalProperties === 'object')
    found.push(...unboundedStrings(schema.additionalProperties, `${path}.*`, defs, seen));
  if (schema.propertyNames) found.push(...unboundedStrings(schema.propertyNames, `${path}.<key>`, defs, seen));
  if (schema.items) found.push(...unboundedStrings(schema.items, `${path}[]`, defs, seen));
  return found;
}

/** Every request schema the contracts export: bodies, path parameters and query parameters. */
const requestSchemas = Object.entries(contracts).filter(
  ([name, value]) => /(Body|Params|Query)$/.test(name) && value instanceof z.ZodType,
) as Array<[string, z.ZodType]>;

describe('text limits of requests', () => {
  it('finds the request schemas', () => {
    expect(requestSchemas.map(([name]) => name)).toEqual(
      expect.arrayContaining([
        'CreateCheckoutSessionBody',
        'PayCheckoutSessionBody',
        'ProductIdParams',
        'ListCustomersQuery',
      ]),
    );
  });

  it.each(requestSchemas)('%s bounds every string it accepts', (_name, schema) => {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    expect(unboundedStrings(json, '', json.$defs ?? {})).toEqual([]);
  });
});
