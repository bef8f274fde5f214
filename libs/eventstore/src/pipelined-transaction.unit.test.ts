import { type PipelinedClient, pipelinedTransaction } from './pipelined-transaction';

/**
 * A pipelined `pg` client on a socket that records what reaches the wire: every statement
 * submitted while the socket is corked goes out in the same write as the uncork. Answers come
 * when the test says, in order, as PostgreSQL's would.
 */
function fakeClient() {
  const writes: string[][] = [];
  let corks = 0;
  let pending: string[] = [];
  const answers: Array<{ text: string; answer: (error?: Error) => void }> = [];
  const flush = () => {
    if (corks === 0 && pending.length > 0) {
      writes.push(pending);
      pending = [];
    }
  };
  const client: PipelinedClient & { connection: { stream: { cork(): void; uncork(): void } } } = {
    connection: {
      stream: {
        cork: () => void corks++,
        uncork: () => {
          corks--;
          flush();
        },
      },
    },
    query(config) {
      const text = typeof config === 'string' ? config : config.text;
      pending.push(text);
      flush();
      return new Promise((resolve, reject) => {
        answers.push({ text, answer: (error) => (error ? reject(error) : resolve({ rows: [{ text }], rowCount: 1 })) });
      });
    },
  };
  /** Answers every statement sent so far, those whose text is in `failing` with an error. */
  const answerAll = async (...failing: string[]) => {
    for (const { text, answer } of answers.splice(0))
      answer(failing.includes(text) ? new Error(`${text} failed`) : undefined);
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { client, writes, answerAll };
}

describe('pipelinedTransaction', () => {
  it('given a first query, when it is sent, then BEGIN and its first statement go out in one write', async () => {
    const { client, writes, answerAll } = fakeClient();
    const tx = pipelinedTransaction(client, { firstStatement: 'LOCK TABLE t' });

    const read = tx.sql.query('SELECT 1', [1]);

    expect(writes).toEqual([['BEGIN; LOCK TABLE t', 'SELECT 1']]);
    await answerAll();
    await expect(read).resolves.toMatchObject({ rows: [{ text: 'SELECT 1' }] });
  });

  it('given writes, when the next query is sent, then the writes go out with it without waiting for their answers', async () => {
    const { client, writes, answerAll } = fakeClient();
    const tx = pipelinedTransaction(client, undefined);

    await tx.sql.write('INSERT a', [1]);
    await tx.sql.write('INSERT b', [2]);
    expect(writes).toEqual([]);
    const read = tx.sql.query('SELECT c', [3]);

    expect(writes).toEqual([['BEGIN', 'INSERT a', 'INSERT b', 'SELECT c']]);
    await answerAll();
    await read;
  });

  it('given a write last, when the transaction commits, then the write and the COMMIT go out in one write', async () => {
    const { client, writes, answerAll } = fakeClient();
    const tx = pipelinedTransaction(client, undefined);
    const read = tx.sql.query('SELECT a', [1]);
    await answerAll();
    await read;

    await tx.sql.write('UPDATE b', [2]);
    const committed = tx.commit();

    expect(writes).toEqual([
      ['BEGIN', 'SELECT a'],
      ['UPDATE b', 'COMMIT'],
    ]);
    await answerAll();
    await committed;
  });

  it('given a write that fails, when the transaction commits, then the commit throws the write’s error', async () => {
    const { client, answerAll } = fakeClient();
    const tx = pipelinedTransaction(client, undefined);
    await tx.sql.write('INSERT taken', [1]);

    const committed = expect(tx.commit()).rejects.toThrow('INSERT taken failed');
    await answerAll('INSERT taken');

    await committed;
  });

  it('given a write that fails, when a later query fails for it, then the query throws the write’s error', async () => {
    const { client, answerAll } = fakeClient();
    const tx = pipelinedTransaction(client, undefined);
    await tx.sql.write('INSERT taken', [1]);

    const read = expect(tx.sql.query('SELECT after', [2])).rejects.toThrow('INSERT taken failed');
    // PostgreSQL refuses every statement after a failed one in the transaction.
    await answerAll('INSERT taken', 'SELECT after');

    await read;
  });

  it('given no statement, when the transaction commits or rolls back, then nothing is sent', async () => {
    const { client, writes } = fakeClient();
    const tx = pipelinedTransaction(client, { firstStatement: 'LOCK TABLE t' });

    await tx.commit();
    await tx.rollback();

    expect(writes).toEqual([]);
  });
});
