'use strict';

/** `--ops=500` on the command line wins over BENCH_OPS=500 in the environment, which wins over the fallback. */
function setting(flag, envName, fallback) {
  const arg = process.argv.slice(2).find((a) => a.startsWith(`--${flag}=`));
  return arg ? arg.slice(flag.length + 3) : (process.env[envName] ?? fallback);
}

/** A setting that must be an integer of at least `min`; anything else stops the benchmark. */
function integerSetting(flag, envName, fallback, min, what) {
  const value = Number(setting(flag, envName, fallback));
  if (!Number.isInteger(value) || value < min) throw new Error(`${envName} must be ${what}, got ${value}`);
  return value;
}

/** A setting that must be a positive integer. */
const positiveSetting = (flag, envName, fallback) => integerSetting(flag, envName, fallback, 1, 'a positive integer');

/** A setting that must be an integer of 0 or more (0: off). */
const countSetting = (flag, envName, fallback) => integerSetting(flag, envName, fallback, 0, 'an integer >= 0');

module.exports = { setting, positiveSetting, countSetting };
