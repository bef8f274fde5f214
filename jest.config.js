// `npm test`: every package's suites in one jest run, so that one package's waits (PostgreSQL,
// Kafka, timers, child processes) overlap another's work. Most suites spend their time waiting:
// two workers left the two cores three-quarters idle. Each package keeps its own jest.config.js
// (run `npx jest` inside it for one package).
const os = require('node:os');

/** @type {import('jest').Config} */
module.exports = {
  projects: ['<rootDir>/libs/*', '<rootDir>/services/*', '<rootDir>/tests/*', '<rootDir>/examples/*'],
  maxWorkers: Number(process.env.TEST_WORKERS ?? Math.max(2, os.availableParallelism() * 2)),
  testTimeout: 30000,
  // A worker keeps part of what each test file loaded (about 27 MB a platform file after a full
  // GC), so its heap grew to 1.1-1.8 GB in a run and every GC marked it all again: PGlite's files
  // took two to three times the CPU late in a worker's life (pglite-template.pglite.int: 13-14 s
  // of CPU in a new worker, 34-40 s after thirteen platform files). A worker past this limit is
  // replaced once its file ends.
  workerIdleMemoryLimit: '800MB',
};
