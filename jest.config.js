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
};
