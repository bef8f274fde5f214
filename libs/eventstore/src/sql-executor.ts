export interface QueryResult<Row> {
  rows: Row[];
  rowCount: number;
}

/** Anything SQL can be sent to: the database itself or one open transaction. */
export interface SqlExecutor {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<QueryResult<Row>>;
  /**
   * A statement whose answer nobody reads (a read model's upsert). In a transaction it is sent
   * at once and its answer read with the next statement's or the COMMIT's, so it costs no round
   * trip of its own; if it fails, that next statement or the commit throws its error and the
   * transaction rolls back. Elsewhere the same as `query`.
   */
  write(sql: string, params?: unknown[]): Promise<void>;
}

export interface TransactionOptions {
  firstStatement?: string;
}
