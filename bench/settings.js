'use strict';

/** `--ops=500` on the command line wins over BENCH_OPS=500 in the environment, which wins over the fallback. */
function setting(flag, envName, fallback) {
  const arg = process.argv.slice(2).find((a) => a.startsWith(`--${flag}=`));
  return arg ? arg.slice(flag.length + 3) : (process.env[envName] ?? fallback);
}

/** A setting that must be a positive integer; anything else stops the benchmark. */
function positiveSetting(flag, envName, fallback) {
  const value = Number(setting(flag, envName, fallback));
  if (!Number.isInteger(value) || value < 1) throw new Error(`${envName} must be a positive integer, got ${value}`);
  return value;
}

module.exports = { setting, positiveSetting };
