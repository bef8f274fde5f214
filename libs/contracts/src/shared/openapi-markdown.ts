/**
 * Renders an OpenAPI 3.1 document (as `OpenApiRegistry.toOpenApi` makes it) as one Markdown
 * page: operations grouped by tag, each with its keys, parameters, body and responses, then
 * every shared schema as a field table. `docs/api.md` is this page for the public API.
 */
type Json = Record<string, any>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;
const KEY_NAMES: Record<string, string> = { secretKey: 'Secret Key', publishableKey: 'Publishable Key' };
/** Inline objects are shown field by field down to this depth, then as `object`. */
const MAX_DEPTH = 3;

const refName = (ref: string) => ref.split('/').pop()!;
const anchor = (name: string) => `schema-${name.toLowerCase()}`;
/** A table cell: one line, pipes escaped. */
const cell = (text: unknown) =>
  String(text ?? '')
    .replace(/\s*\n\s*/g, ' ')
    .replace(/\|/g, '\\|');

/** Bounds zod gives every integer: not a rule a reader needs to see. */
const SAFE_INTEGER_BOUNDS = new Set([Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER]);

function constraints(schema: Json): string[] {
  const notes: string[] = [];
  const bound = (value: unknown) => value !== undefined && !SAFE_INTEGER_BOUNDS.has(value as number);
  if (bound(schema.minimum)) notes.push(`>= ${schema.minimum}`);
  if (bound(schema.exclusiveMinimum)) notes.push(`> ${schema.exclusiveMinimum}`);
  if (bound(schema.maximum)) notes.push(`<= ${schema.maximum}`);
  if (schema.minLength !== undefined) notes.push(`min length ${schema.minLength}`);
  if (schema.maxLength !== undefined) notes.push(`max length ${schema.maxLength}`);
  if (schema.minItems !== undefined) notes.push(`min ${schema.minItems} items`);
  if (schema.maxItems !== undefined) notes.push(`max ${schema.maxItems} items`);
  // A format (date-time, email, uri) says what its generated pattern spells out.
  if (schema.format) notes.push(schema.format);
  else if (schema.pattern) notes.push(`pattern \`${schema.pattern}\``);
  return notes;
}

/** A schema's type in one cell: a link for a shared schema, enum values, unions with `\|`. */
export function typeText(schema: Json | undefined): string {
  if (!schema || Object.keys(schema).length === 0) return 'any';
  if (schema.$ref) return `[${refName(schema.$ref)}](#${anchor(refName(schema.$ref))})`;
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return (union as Json[]).map(typeText).join(' or ');
  if (schema.allOf) return (schema.allOf as Json[]).map(typeText).join(' and ');
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum) return (schema.enum as unknown[]).map((value) => `\`${JSON.stringify(value)}\``).join(', ');
  const types: string[] = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : ['any'];
  const named = types.map((type) => {
    if (type === 'array') return `array of ${typeText(schema.items)}`;
    if (type === 'object' && schema.additionalProperties && !schema.properties) {
      return `map of ${typeText(schema.additionalProperties === true ? {} : schema.additionalProperties)}`;
    }
    return type;
  });
  const notes = constraints(schema);
  return `${named.join(' or ')}${notes.length ? ` (${notes.join(', ')})` : ''}`;
}

interface FieldRow {
  name: string;
  type: string;
  required: boolean;
  description: string;
}

/** The fields of an object schema, inline sub-objects as `parent.child` rows. */
export function fieldRows(schema: Json, prefix = '', depth = 0): FieldRow[] {
  const required = new Set<string>(schema.required ?? []);
  return Object.entries((schema.properties ?? {}) as Record<string, Json>).flatMap(([name, field]) => {
    const row: FieldRow = {
      name: `${prefix}${name}`,
      type: typeText(field),
      required: required.has(name),
      description: [
        field.description,
        field.default !== undefined ? `Default \`${JSON.stringify(field.default)}\`.` : '',
      ]
        .filter(Boolean)
        .join(' '),
    };
    const nested = field.type === 'object' && field.properties && depth < MAX_DEPTH;
    return nested ? [row, ...fieldRows(field, `${prefix}${name}.`, depth + 1)] : [row];
  });
}

function fieldTable(rows: FieldRow[]): string[] {
  if (rows.length === 0) return [];
  return [
    '| field | type | required | description |',
    '| --- | --- | --- | --- |',
    ...rows.map((r) => `| \`${r.name}\` | ${cell(r.type)} | ${r.required ? 'yes' : 'no'} | ${cell(r.description)} |`),
  ];
}

/** A body: a link to its shared schema, or its fields when it is inline. */
function bodyLines(schema: Json | undefined): string[] {
  if (!schema) return [];
  if (schema.$ref || !schema.properties) return [`Body: ${typeText(schema)}.`];
  return ['Body:', '', ...fieldTable(fieldRows(schema))];
}

/** A security requirement in words: a key's name, or an app's token with its scope (docs/oauth.md). */
const securityNames = (entry: Json): string[] =>
  Object.entries(entry).map(([name, scopes]) =>
    name === 'oauth2' ? `an app's OAuth token with ${(scopes as string[]).join(', ')}` : (KEY_NAMES[name] ?? name),
  );

function operationLines(path: string, method: string, operation: Json, serverUrl: string): string[] {
  const keys = (operation.security as Json[] | undefined)?.flatMap(securityNames) ?? [];
  const parameters = (operation.parameters ?? []) as Json[];
  const lines = [`### \`${method.toUpperCase()} ${serverUrl}${path}\``, '', cell(operation.summary), ''];
  if (keys.length) lines.push(`Keys: ${keys.join(' or ')}.`, '');
  if (parameters.length) {
    lines.push(
      '| parameter | in | required | type | description |',
      '| --- | --- | --- | --- | --- |',
      ...parameters.map(
        (p) =>
          `| \`${p.name}\` | ${p.in} | ${p.required ? 'yes' : 'no'} | ${cell(typeText(p.schema))} | ${cell(p.schema?.description ?? p.description)} |`,
      ),
      '',
    );
  }
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (body) lines.push(...bodyLines(body), '');
  lines.push('| status | meaning | body |', '| --- | --- | --- |');
  for (const [status, response] of Object.entries((operation.responses ?? {}) as Record<string, Json>)) {
    const schema = response.content?.['application/json']?.schema;
    lines.push(`| ${status} | ${cell(response.description)} | ${schema ? cell(typeText(schema)) : ''} |`);
  }
  return [...lines, ''];
}

export interface MarkdownOptions {
  title: string;
  /** Paragraphs put under the title, before the operations. */
  introduction: string[];
}

/** The whole page. Deterministic: the same document always gives the same text. */
export function openApiMarkdown(document: Json, options: MarkdownOptions): string {
  const serverUrl: string = document.servers?.[0]?.url ?? '';
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries((document.paths ?? {}) as Record<string, Json>)) {
    for (const method of METHODS) {
      const operation = item[method] as Json | undefined;
      if (!operation) continue;
      const tag: string = operation.tags?.[0] ?? 'Other';
      byTag.set(tag, [...(byTag.get(tag) ?? []), ...operationLines(path, method, operation, serverUrl)]);
    }
  }
  const schemas = Object.entries((document.components?.schemas ?? {}) as Record<string, Json>).sort(([a], [b]) =>
    a.localeCompare(b),
  );
  const tagAnchor = (tag: string) => tag.toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return [
    `# ${options.title}`,
    '',
    ...options.introduction.flatMap((paragraph) => [paragraph, '']),
    '## Contents',
    '',
    ...[...byTag.keys()].map((tag) => `- [${tag}](#${tagAnchor(tag)})`),
    '- [Schemas](#schemas)',
    '',
    ...[...byTag.entries()].flatMap(([tag, lines]) => [`## ${tag}`, '', ...lines]),
    '## Schemas',
    '',
    ...schemas.flatMap(([name, schema]) => [
      `<a id="${anchor(name)}"></a>`,
      '',
      `### ${name}`,
      '',
      ...(schema.description ? [cell(schema.description), ''] : []),
      ...(schema.properties ? fieldTable(fieldRows(schema)) : [`${typeText(schema)}`]),
      '',
    ]),
  ]
    .join('\n')
    .replace(/\n{3,}/g, '\n\n');
}
