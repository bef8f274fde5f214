// `npm test`: builds what the suites import (turbo, cached), then runs every package's suites in
// one jest run (jest.config.js at the root) and ends with one line for the whole run,
// "N passed, N failed[, N skipped]". Arguments go to jest: `npm test -- services/billing`,
// `npm test -- --selectProjects @billing/gateway`.
const { spawn, spawnSync } = require('node:child_process');

const build = spawnSync('npx', ['turbo', 'run', 'build', '--output-logs=errors-only'], { stdio: 'inherit' });
if (build.status !== 0) process.exit(build.status ?? 1);

// PGlite loads its WebAssembly with a dynamic import, which jest allows only with this flag.
const NODE_OPTIONS = [process.env.NODE_OPTIONS, '--experimental-vm-modules', '--disable-warning=ExperimentalWarning']
  .filter(Boolean)
  .join(' ');
const child = spawn('npx', ['jest', ...process.argv.slice(2)], {
  stdio: ['ignore', 'pipe', 'pipe'],
  env: { ...process.env, NODE_OPTIONS },
});
const totals = { passed: 0, failed: 0, skipped: 0 };
let reported = false;
let suitesFailed = 0;

function countLine(line) {
  const suites = /Test Suites:\s+(\d+) failed/.exec(line);
  if (suites) suitesFailed = Number(suites[1]);
  const match = /Tests:\s+(.*\d+ total)/.exec(line);
  if (!match) return;
  reported = true;
  for (const [, count, kind] of match[1].matchAll(/(\d+) (passed|failed|skipped)/g)) totals[kind] += Number(count);
}

/** Echoes a stream and counts its complete lines; a line split across chunks is joined first. */
function follow(stream, out) {
  let partial = '';
  stream.on('data', (chunk) => {
    out.write(chunk);
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop();
    lines.forEach(countLine);
  });
  stream.on('end', () => countLine(partial));
}
follow(child.stdout, process.stdout);
follow(child.stderr, process.stderr);
child.on('close', (code) => {
  const skipped = totals.skipped ? `, ${totals.skipped} skipped` : '';
  const suites = suitesFailed ? ` (${suitesFailed} test files failed, some before their first test)` : '';
  process.stdout.write(`\n${totals.passed} passed, ${totals.failed} failed${skipped}${suites}\n`);
  if (!reported && code === 0) {
    process.stderr.write('No test results were reported.\n');
    process.exit(1);
  }
  process.exit(code ?? 1);
});
