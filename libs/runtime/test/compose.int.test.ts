import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { checkCompose, composeTool } = require('../../../scripts/check-compose.js') as {
  checkCompose: (file?: string) => string[];
  composeTool: () => unknown;
};

const root = join(__dirname, '..', '..', '..');
const tool = composeTool();

/**
 * docker-compose.yml against the code, through the compose tool's `config` (no engine). The
 * tool is Debian's docker-compose or the docker CLI plugin; `.ci/run` installs it, so under
 * CI=true its absence fails.
 */
const suite = tool || process.env.CI === 'true' ? describe : describe.skip;
if (!tool && process.env.CI !== 'true') {
  console.warn('SKIPPED "docker-compose.yml": no compose tool (apt-get install docker-compose)');
}

suite('docker-compose.yml', () => {
  it('is valid, and every service, port and variable it names exists in the code', () => {
    expect(checkCompose()).toEqual([]);
  });

  it('names what is wrong in a deliberately broken copy', () => {
    const dir = mkdtempSync(join(tmpdir(), 'compose-'));
    try {
      const broken = readFileSync(join(root, 'docker-compose.yml'), 'utf8')
        .replace('PORT: 4101 }', 'PORT: 4199 }')
        .replace('REDIS_URL: redis://redis:6379', 'REDIS_URL: redis://redis:6379\n    CACHE_TTL_SECONDS: 60')
        .replace('    healthcheck: { test: ["CMD", "redis-cli", "ping"], interval: 2s, retries: 30 }\n', '')
        .replace(
          '    build: { context: ., args: { SERVICE: notifications } }\n',
          '    build: { context: ., args: { SERVICE: notifications } }\n    ports: ["4105:4105"]\n',
        )
        .replace(
          'build: { context: ., args: { SERVICE: promotions } }',
          'build: { context: ., args: { SERVICE: coupons } }',
        );
      const file = join(dir, 'docker-compose.yml');
      writeFileSync(file, broken);
      expect(checkCompose(file)).toEqual(
        expect.arrayContaining([
          "catalog: PORT 4199 is not catalog's defaultPort 4101",
          'checkout: CATALOG_SERVICE_URL=http://catalog:4101 is not the catalog container at its PORT 4199',
          'catalog: CACHE_TTL_SECONDS is read nowhere in libs/ or services/',
          'redis: no health check',
          'notifications: publishes a port',
          'services/promotions: 0 containers build it (one expected)',
          'promotions: builds SERVICE=coupons, which is not a service under services/',
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
