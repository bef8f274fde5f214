import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * A new in-memory PGlite runs initdb: 2.4-4 s on a 2-core machine, most of a test platform's
 * start. Loading the empty cluster another one left behind takes 0.6 s. So the first in-memory
 * database of a machine writes that cluster to the temp directory (one file per PGlite version,
 * written whole then renamed, so a reader never sees half of it) and the others load it.
 */
export async function inMemoryPglite(templateDir = tmpdir()): Promise<PGlite> {
  const template = templatePath(templateDir);
  const stored = readIfPresent(template);
  if (stored) {
    try {
      return await PGlite.create({ loadDataDir: new Blob([stored]) });
    } catch {
      // Not a cluster this PGlite can load (a damaged file): made again below.
    }
  }
  const db = await PGlite.create();
  const cluster = await db.dumpDataDir('none');
  const partial = `${template}.${randomBytes(6).toString('hex')}`;
  writeFileSync(partial, Buffer.from(await cluster.arrayBuffer()));
  renameSync(partial, template);
  return db;
}

/**
 * PGlite keeping its data in `dataDir`. A directory that does not exist yet starts from the
 * empty cluster an in-memory database left in the temp directory, when there is one (it saves
 * the first `npm start` its initdb, 2-3 s); otherwise PGlite runs initdb there itself.
 */
export async function pgliteIn(dataDir: string, templateDir = tmpdir()): Promise<PGlite> {
  mkdirSync(dirname(dataDir), { recursive: true });
  // Only a directory that does not exist yet: whatever is in one that does stays as it is.
  const stored = existsSync(dataDir) ? undefined : readIfPresent(templatePath(templateDir));
  if (stored) {
    try {
      return await PGlite.create(dataDir, { loadDataDir: new Blob([stored]) });
    } catch {
      // Not a cluster this PGlite can load (a damaged file): the directory it made is cleared for initdb.
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  return PGlite.create(dataDir);
}

const templatePath = (templateDir: string) => join(templateDir, `billing-pglite-${pgliteVersion()}-cluster.tar`);

function readIfPresent(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

function pgliteVersion(): string {
  const packageRoot = join(dirname(require.resolve('@electric-sql/pglite')), '..');
  return (JSON.parse(readFileSync(join(packageRoot, 'package.json'), 'utf8')) as { version: string }).version;
}
