'use strict';
// The floor a paid checkout is measured against (`bench/checkout/run.js --floor`): pgbench
// running floor.sql, the durable writes of one paid checkout, with as many clients as the
// closed loop's buyers, in a schema of its own. Answers paid checkouts per second and the CPU
// each costs (PostgreSQL's and pgbench's).
const { execFile } = require('node:child_process');
const { join } = require('node:path');
const { randomName } = require('../platform');
const { endedChildrenCpuMs, serverCpuMs, serverCpuSpent } = require('../process-cpu');

const TABLES = `
  CREATE TABLE events (global_position bigserial PRIMARY KEY, stream_id text NOT NULL, stream_version integer NOT NULL,
    type text NOT NULL, data jsonb NOT NULL, occurred_at timestamptz NOT NULL DEFAULT now(), UNIQUE (stream_id, stream_version));
  CREATE TABLE sessions (id text PRIMARY KEY, status text NOT NULL, document jsonb NOT NULL);
  CREATE TABLE charges (key text PRIMARY KEY, amount integer NOT NULL);
  CREATE TABLE customers (id text PRIMARY KEY, email text NOT NULL UNIQUE);
  CREATE TABLE subscriptions (id text PRIMARY KEY, customer_id text NOT NULL, document jsonb NOT NULL);
  CREATE TABLE invoices (id text PRIMARY KEY, subscription_id text NOT NULL, document jsonb NOT NULL);
  CREATE TABLE processed_messages (consumer text NOT NULL, event_id text NOT NULL, PRIMARY KEY (consumer, event_id));`;

function pgbench(args, env) {
  return new Promise((resolve, reject) => {
    execFile('pgbench', args, { env: { ...process.env, ...env }, maxBuffer: 16 << 20 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`pgbench failed: ${stderr || error.message}`));
      else resolve(stdout);
    });
  });
}

/** One floor run of `seconds` with `clients` connections on `database` (the bench's pool). */
async function runFloor(database, { clients, seconds }) {
  const schema = randomName('bench_floor');
  await database.exec(`CREATE SCHEMA "${schema}"; SET search_path = "${schema}"; ${TABLES} RESET search_path;`);
  try {
    const serversBefore = serverCpuMs();
    const childrenBefore = endedChildrenCpuMs();
    const out = await pgbench(
      [
        '-n',
        '-M',
        'prepared',
        '-c',
        String(clients),
        '-j',
        '2',
        '-T',
        String(seconds),
        '-f',
        join(__dirname, 'floor.sql'),
        process.env.DATABASE_URL,
      ],
      { PGOPTIONS: `-c search_path=${schema}` },
    );
    const servers = serverCpuSpent(serversBefore, serverCpuMs());
    const pgbenchMs = endedChildrenCpuMs() - childrenBefore;
    const checkouts = Number(/number of transactions actually processed: (\d+)/.exec(out)?.[1]);
    const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
    return {
      checkouts_per_s: Math.round(tps * 10) / 10,
      cpu_ms_per_checkout: {
        postgresql: Math.round((servers.postgresql / checkouts) * 100) / 100,
        pgbench: Math.round((pgbenchMs / checkouts) * 100) / 100,
        all: Math.round(((servers.postgresql + pgbenchMs) / checkouts) * 100) / 100,
      },
    };
  } finally {
    await database.exec(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  }
}

module.exports = { runFloor };
