// `npm test`: every package's tests through turbo, then one closing line for the whole run,
// "N passed, N failed[, N skipped]", summed from each jest run's "Tests:" line.
const { spawn } = require('node:child_process');

const args = ['turbo', 'run', 'test', '--concurrency=1', '--continue', ...process.argv.slice(2)];
const child = spawn('npx', args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
const totals = { passed: 0, failed: 0, skipped: 0 };
let suitesReported = 0;

function countLine(line) {
  const match = /Tests:\s+(.*\d+ total)/.exec(line);
  if (!match) return;
  suitesReported++;
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
  process.stdout.write(`\n${totals.passed} passed, ${totals.failed} failed${skipped}\n`);
  if (suitesReported === 0 && code === 0) {
    process.stderr.write('No test results were reported.\n');
    process.exit(1);
  }
  process.exit(code ?? 1);
});
