import type { SqlExecutor } from './database';

/** What every document carries, besides the columns a table adds for its queries. */
interface Document {
  id: string;
  created_at: string;
}

/** The organization and environment a row belongs to. */
export interface RowTenant {
  organization: string;
  environment: string;
}

/**
 * What `write` may be given besides the document: the extra columns' values when they are not
 * all the document's (see `columnsOf`), and the row's tenant when the document does not carry it
 * (a public object such as a test clock has no `organization`; the recorded event has).
 */
export interface GivenValues {
  columns?: unknown[];
  tenant?: RowTenant;
}

/** A document that carries its tenant may be written alone; one that does not is given its tenant. */
type WriteGiven<Doc> = [Doc] extends [RowTenant]
  ? [given?: unknown[] | GivenValues]
  : [given: GivenValues & { tenant: RowTenant }];

export interface DocumentTableSpec<Doc extends Document> {
  /** The table's name inside a service's schema. */
  name: string;
  /** Columns a query filters or orders by, beyond the common ones: name -> SQL type. */
  columns?: Record<string, string>;
  /** The values of those columns, read from the document (unless `write` is given them). */
  columnsOf?: (document: Doc) => unknown[];
  /** Extra columns set when the row is inserted and left as they are by later writes. */
  insertOnly?: string[];
  /**
   * Statements that bring a table made by an earlier version up to date (`ALTER TABLE ... ADD
   * COLUMN IF NOT EXISTS`, backfills), `{table}` standing for the qualified table name. They run
   * after CREATE TABLE and before the indexes, which may use the columns they add.
   */
  migrations?: string[];
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
  // A unique index beyond the id can refuse a write, and the caller answers that (a slug taken):
  // such writes wait for their answer. Others go with the next statement (SqlExecutor.write).
  const mayRefuse = spec.indexes.some((index) => /\bUNIQUE\b/i.test(index));
  const insertOnly = new Set(spec.insertOnly ?? []);
  const table = (schema: string) => `${schema}.${spec.name}`;
  const statements = (list: string[] | undefined, schema: string) =>
    (list ?? []).map((statement) => `    ${statement.replaceAll('{table}', table(schema))};\n`).join('');
  return {
    table,
    /** CREATE TABLE, its migrations and its indexes, each idempotent: run by a service's migration. */
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
${statements(spec.migrations, schema)}${statements(spec.indexes, schema)}`;
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
    /** `given`: the extra columns' values (an array, or `columns`) and the row's `tenant`, when not the document's. */
    async write(
      sql: SqlExecutor,
      schema: string,
      document: Doc,
      streamVersion: number,
      ...[given]: WriteGiven<Doc>
    ): Promise<void> {
      const { columns, tenant } = (Array.isArray(given) ? { columns: given } : (given ?? {})) as GivenValues;
      const { organization, environment } = tenant ?? (document as Doc & RowTenant);
      const columnValues = columns ?? spec.columnsOf?.(document) ?? [];
      const names = ['id', 'organization', 'environment', ...extra, 'created_at', 'stream_version', 'document'];
      const values = [
        document.id,
        organization,
        environment,
        ...columnValues,
        document.created_at,
        streamVersion,
        JSON.stringify(document),
      ];
      const updates = [...extra.filter((name) => !insertOnly.has(name)), 'stream_version', 'document'].map(
        (name) => `${name} = EXCLUDED.${name}`,
      );
      const upsert = `INSERT INTO ${table(schema)} (${names.join(', ')})
         VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})
         ON CONFLICT (id) DO UPDATE SET ${updates.join(', ')}
         WHERE ${table(schema)}.stream_version < EXCLUDED.stream_version`;
      if (mayRefuse) await sql.query(upsert, values);
      else await sql.write(upsert, values);
    },
  };
}

export type DocumentTable<Doc extends Document> = ReturnType<typeof documentTable<Doc>>;
