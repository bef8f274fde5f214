// `npm run test:coverage`: npm test with line coverage of every package's sources, counted
// whichever package's tests ran them. Packages are mapped to their sources (not dist), so a
// platform scenario in tests/platform counts for the billing code it drives. Code that only
// runs in child processes (crash loops, replicas, `npm start`) is not counted.
const { existsSync, readdirSync } = require('node:fs');
const { join } = require('node:path');
const base = require('./jest.config.js');

const packageDirs = (folders) =>
  folders
    .filter((folder) => existsSync(join(__dirname, folder)))
    .flatMap((folder) => readdirSync(join(__dirname, folder)).map((name) => join(__dirname, folder, name)))
    .filter((dir) => existsSync(join(dir, 'package.json')));

/** `@billing/<name>` -> that package's src, for every library and service. */
const moduleNameMapper = Object.fromEntries(
  packageDirs(['libs', 'services']).map((dir) => [`^${require(join(dir, 'package.json')).name}$`, join(dir, 'src')]),
);

/** @type {import('jest').Config} */
module.exports = {
  ...base,
  projects: packageDirs(['libs', 'services', 'tests', 'examples'])
    .filter((dir) => existsSync(join(dir, 'jest.config.js')))
    .map((dir) => ({ ...require(join(dir, 'jest.config.js')), rootDir: dir, moduleNameMapper })),
  collectCoverage: true,
  coverageProvider: 'v8',
  collectCoverageFrom: ['**/{libs,services}/*/src/**/*.ts', '!**/*.test.ts', '!**/*.d.ts'],
  coverageReporters: ['text-summary', 'json-summary'],
  coverageDirectory: 'coverage',
};
