'use strict';
// CPU time of the processes a benchmark does not run itself, read from /proc (Linux): the
// PostgreSQL server (every backend, the ones that exited during the run included: the
// postmaster's children's time), the Kafka broker and Redis. Elsewhere every figure is null.
const { execFileSync } = require('node:child_process');
const { readFileSync, readdirSync } = require('node:fs');

let ticksPerSecond;
const msPerTick = () => 1000 / (ticksPerSecond ??= Number(execFileSync('getconf', ['CLK_TCK']).toString()) || 100);

/** pid, command name, parent, own and reaped children's CPU ticks, command line of every process. */
function processes() {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const cmdline = readFileSync(`/proc/${name}/cmdline`, 'utf8').replaceAll('\0', ' ');
      found.push({
        pid: Number(name),
        comm,
        ppid: Number(fields[1]),
        own: Number(fields[11]) + Number(fields[12]),
        children: Number(fields[13]) + Number(fields[14]),
        cmdline,
      });
    } catch {
      // The process ended while being read.
    }
  }
  return found;
}

/** CPU milliseconds so far of PostgreSQL, Kafka and Redis on this machine (null where there is no /proc). */
function serverCpuMs() {
  let all;
  try {
    all = processes();
  } catch {
    return { postgresql: null, kafka: null, redis: null };
  }
  const postgres = all.filter((p) => p.comm === 'postgres' || p.comm === 'postmaster');
  const pids = new Set(postgres.map((p) => p.pid));
  const ticks = (list, withChildren) => list.reduce((sum, p) => sum + p.own + (withChildren(p) ? p.children : 0), 0);
  const ms = (n) => Math.round(n * msPerTick());
  return {
    // The postmaster's children's time holds the backends that ended; the live ones count their own.
    postgresql: ms(ticks(postgres, (p) => !pids.has(p.ppid))),
    kafka: ms(
      ticks(
        all.filter((p) => p.cmdline.includes('kafka.Kafka')),
        () => false,
      ),
    ),
    redis: ms(
      ticks(
        all.filter((p) => p.comm === 'redis-server'),
        () => false,
      ),
    ),
  };
}

/** CPU milliseconds of this process's children that ended and were waited for (pgbench, once it exits). */
function endedChildrenCpuMs() {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return Math.round((Number(fields[13]) + Number(fields[14])) * msPerTick());
}

/** What each server spent between two `serverCpuMs()` readings. */
const serverCpuSpent = (before, after) =>
  Object.fromEntries(
    Object.keys(after).map((name) => [name, after[name] === null ? null : after[name] - before[name]]),
  );

module.exports = { endedChildrenCpuMs, serverCpuMs, serverCpuSpent };
