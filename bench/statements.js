'use strict';
// What the benches that drive the platform count of its database work: every statement, round
// trip and transaction the services of this process send (bench/checkout, bench/credits).

const round = (n, digits = 1) => Number(n.toFixed(digits));

/**
 * Counts what every service of this process sends to the database: statements (BEGIN, a
 * transaction's first statement and COMMIT included, as the server sees them), round trips
 * (statements whose answer is awaited before the next is sent: a transaction's BEGIN travels
 * with its first statement and a `write` with what follows it) and transactions (those that sent
 * anything). LISTEN connections are not counted.
 */
function countStatements(database) {
  const query = database.query.bind(database);
  const write = database.write.bind(database);
  // The bench's own polling goes around the count.
  const counts = {
    statements: 0,
    roundTrips: 0,
    transactions: 0,
    uncounted: query,
    byText: process.env.BENCH_STATEMENTS_BY_TEXT ? new Map() : null,
  };
  const note = (text, awaited) => {
    counts.statements++;
    if (awaited) counts.roundTrips++;
    if (counts.byText) {
      const key = String(typeof text === 'string' ? text : text?.text).replace(/\s+/g, ' ');
      counts.byText.set(key, (counts.byText.get(key) ?? 0) + 1);
    }
  };
  const transaction = database.transaction.bind(database);
  database.query = (...args) => {
    note(args[0], true);
    return query(...args);
  };
  database.write = (...args) => {
    note(args[0], true);
    return write(...args);
  };
  database.transaction = (fn, options) => {
    let begun = false;
    const begin = () => {
      if (begun) return;
      begun = true;
      counts.transactions++;
      counts.statements += options?.firstStatement ? 2 : 1;
    };
    const ended = () => {
      if (!begun) return;
      counts.statements++; // COMMIT or ROLLBACK
      counts.roundTrips++;
    };
    return transaction(
      (tx) =>
        fn({
          ...tx,
          query: (...args) => {
            begin();
            note(args[0], true);
            return tx.query(...args);
          },
          write: (...args) => {
            begin();
            note(args[0], false);
            return tx.write(...args);
          },
        }),
      options,
    ).finally(ended);
  };
  return counts;
}

function statementsByText(before, after, paidCount) {
  return [...after]
    .map(([text, n]) => [text, round((n - (before.get(text) ?? 0)) / Math.max(1, paidCount), 2)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([text, n]) => `${n} ${text.length > 240 ? `${text.slice(0, 150)} … ${text.slice(-90)}` : text}`);
}

module.exports = { countStatements, statementsByText };
