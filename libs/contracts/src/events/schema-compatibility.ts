import type { JsonSchema } from './asyncapi';

/**
 * What makes `current` incompatible with `previous`, for messages that share one
 * `schema_version`: readers written against either must read what the other describes, and
 * a consumer replaying a topic from the beginning validates old messages with the new schema.
 * So a field may not be removed, change its type, become required (a new required field) or
 * stop being required, and an enum may not lose a value. A new optional field is compatible.
 * Returns one line per problem, `path: what`; empty when compatible.
 */
export function schemaIncompatibilities(previous: JsonSchema, current: JsonSchema): string[] {
  const problems: string[] = [];
  compare(previous, current, '$', { previous, current }, problems, new Set());
  return problems;
}

interface Roots {
  previous: JsonSchema;
  current: JsonSchema;
}

function compare(
  previousSchema: JsonSchema,
  currentSchema: JsonSchema,
  path: string,
  roots: Roots,
  problems: string[],
  seen: Set<string>,
): void {
  const before = resolve(previousSchema, roots.previous);
  const after = resolve(currentSchema, roots.current);
  const key = `${path}|${JSON.stringify(previousSchema)}|${JSON.stringify(currentSchema)}`;
  if (seen.has(key)) return;
  seen.add(key);

  const typesBefore = typesOf(before, roots.previous);
  const typesAfter = typesOf(after, roots.current);
  if (typesBefore && typesAfter && !sameSet(typesBefore, typesAfter)) {
    problems.push(
      `${path}: type changed from ${[...typesBefore].sort().join('|')} to ${[...typesAfter].sort().join('|')}`,
    );
    return;
  }
  if ('const' in before && 'const' in after && JSON.stringify(before.const) !== JSON.stringify(after.const)) {
    problems.push(`${path}: constant changed from ${JSON.stringify(before.const)} to ${JSON.stringify(after.const)}`);
  }
  const enumBefore = enumOf(before, roots.previous);
  const enumAfter = enumOf(after, roots.current);
  if (enumBefore && enumAfter) {
    for (const value of enumBefore) {
      if (!enumAfter.has(value)) problems.push(`${path}: enum value ${value} removed`);
    }
  }

  const objectBefore = objectBranch(before, roots.previous);
  const objectAfter = objectBranch(after, roots.current);
  if (objectBefore && objectAfter) compareObjects(objectBefore, objectAfter, path, roots, problems, seen);

  const itemsBefore = arrayItems(before, roots.previous);
  const itemsAfter = arrayItems(after, roots.current);
  if (itemsBefore && itemsAfter) compare(itemsBefore, itemsAfter, `${path}[]`, roots, problems, seen);
}

function compareObjects(
  before: JsonSchema,
  after: JsonSchema,
  path: string,
  roots: Roots,
  problems: string[],
  seen: Set<string>,
): void {
  const propsBefore = (before.properties ?? {}) as Record<string, JsonSchema>;
  const propsAfter = (after.properties ?? {}) as Record<string, JsonSchema>;
  const requiredBefore = new Set((before.required ?? []) as string[]);
  const requiredAfter = new Set((after.required ?? []) as string[]);
  for (const [name, schema] of Object.entries(propsBefore)) {
    const field = `${path}.${name}`;
    if (!(name in propsAfter)) {
      problems.push(`${field}: field removed`);
      continue;
    }
    if (requiredBefore.has(name) && !requiredAfter.has(name)) problems.push(`${field}: no longer required`);
    compare(schema, propsAfter[name]!, field, roots, problems, seen);
  }
  for (const name of requiredAfter) {
    if (!requiredBefore.has(name)) problems.push(`${path}.${name}: new required field`);
  }
  const valuesBefore = before.additionalProperties;
  const valuesAfter = after.additionalProperties;
  if (isSchema(valuesBefore) && isSchema(valuesAfter)) {
    compare(valuesBefore, valuesAfter, `${path}.*`, roots, problems, seen);
  }
}

const isSchema = (value: unknown): value is JsonSchema => typeof value === 'object' && value !== null;

function resolve(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 32; hops++) {
    const ref = current.$ref as string;
    if (!ref.startsWith('#/')) break;
    let target: unknown = root;
    for (const part of ref.slice(2).split('/')) target = (target as Record<string, unknown> | undefined)?.[part];
    if (!isSchema(target)) break;
    current = target;
  }
  return current;
}

/** Branches of a union (`anyOf`/`oneOf`), or the schema itself. */
function branches(schema: JsonSchema, root: JsonSchema): JsonSchema[] {
  const union = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (!union) return [schema];
  return union.flatMap((branch) => branches(resolve(branch, root), root));
}

/** The JSON types a schema admits; undefined when it says nothing (any value). */
function typesOf(schema: JsonSchema, root: JsonSchema): Set<string> | undefined {
  const types = new Set<string>();
  for (const branch of branches(schema, root)) {
    if (typeof branch.type === 'string') types.add(branch.type);
    else if (Array.isArray(branch.type)) for (const t of branch.type) types.add(String(t));
    else if ('const' in branch) types.add(jsonTypeOf(branch.const));
    else if (Array.isArray(branch.enum)) for (const v of branch.enum) types.add(jsonTypeOf(v));
    else return undefined;
  }
  return types;
}

function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' ? 'number' : typeof value;
}

function enumOf(schema: JsonSchema, root: JsonSchema): Set<string> | undefined {
  const values = new Set<string>();
  for (const branch of branches(schema, root)) {
    if (Array.isArray(branch.enum)) for (const v of branch.enum) values.add(JSON.stringify(v));
  }
  return values.size > 0 ? values : undefined;
}

function objectBranch(schema: JsonSchema, root: JsonSchema): JsonSchema | undefined {
  return branches(schema, root).find((b) => b.type === 'object' || isSchema(b.properties));
}

function arrayItems(schema: JsonSchema, root: JsonSchema): JsonSchema | undefined {
  const array = branches(schema, root).find((b) => b.type === 'array');
  return array && isSchema(array.items) ? array.items : undefined;
}

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));
