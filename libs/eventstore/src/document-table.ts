import type { SqlExecutor } from './database';

/** What every document row carries, besides the columns a table adds for its queries. */
interface Document {
  id: string;
  organization: string;
  environment: string;
  created_at: string;
}

export interface DocumentTableSpec<Doc extends Document> {
  /** The table's name inside a service's schema. */
  name: string;
  /** Columns a query filters or orders by, beyond the common ones: name -> SQL type. */
  columns?: Record<string, string>;
  /** The values of those columns, read from the document (unless `write` is given them). */
  columnsOf?: (document: Doc) => unknown[];
  /** Index statements, `{table}` standing for the qualified table name. */
  indexes: string[];
}

export interface StoredDocument<Doc> {
  document: Doc;
  stream_version: number;
}

/**
 * A read model that keeps one JSON document per record, with the columns its queries need:
 * `id`, `organization`, `environment`, `created_at`, `stream_version` and `document` always,
 * others as declared. `write` is idempotent and ordered: a document at or below the stored
 * stream version changes nothing, so a projection may see an event twice.
 */
export function documentTable<Doc extends Document>(spec: DocumentTableSpec<Doc>) {
  const extra = Object.keys(spec.columns ?? {});
  const table = (schema: string) => `${schema}.${spec.name}`;
  return {
    table,
    /** CREATE TABLE and its indexes, each IF NOT EXISTS: run by a service's migration. */
    ddl(schema: string): string {
      const columns = Object.entries(spec.columns ?? {}).map(([name, type]) => `      ${name} ${type},\n`);
      return `
    CREATE TABLE IF NOT EXISTS ${table(schema)} (
      id text PRIMARY KEY,
      organization text NOT NULL,
      environment text NOT NULL,
${columns.join('')}      created_at timestamptz NOT NULL,
      stream_version integer NOT NULL,
      document jsonb NOT NULL
    );
${spec.indexes.map((index) => `    ${index.replaceAll('{table}', table(schema))};`).join('\n')}
`;
    },
    /** The stored document and version, with any of the extra columns named in `also`. */
    async read<Also extends object = object>(
      sql: SqlExecutor,
      schema: string,
      id: string,
      also: (keyof Also & string)[] = [],
    ): Promise<(StoredDocument<Doc> & Also) | undefined> {
      const { rows } = await sql.query<StoredDocument<Doc> & Also>(
        `SELECT ${['document', 'stream_version', ...also].join(', ')} FROM ${table(schema)} WHERE id = $1`,
        [id],
      );
      return rows[0];
    },
    /** `columnValues` are the extra columns' values when they are not all the document's (see `columnsOf`). */
    async write(
      sql: SqlExecutor,
      schema: string,
      document: Doc,
      streamVersion: number,
      columnValues: unknown[] = spec.columnsOf?.(document) ?? [],
    ): Promise<void> {
      const names = ['id', 'organization', 'environment', ...extra, 'created_at', 'stream_version', 'document'];
      const values = [
        document.id,
        document.organization,
        document.environment,
        ...columnValues,
        document.created_at,
        streamVersion,
        JSON.stringify(document),
      ];
      const updates = [...extra, 'stream_version', 'document'].map((name) => `${name} = EXCLUDED.${name}`);
      await sql.query(
        `INSERT INTO ${table(schema)} (${names.join(', ')})
         VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})
         ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}
         WHERE ${table(schema)}.stream_version < EXCLUDED.stream_version`,
        values,
      );
    },
  };
}

export type DocumentTable<Doc extends Document> = ReturnType<typeof documentTable<Doc>>;
