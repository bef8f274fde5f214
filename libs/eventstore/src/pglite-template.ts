import { randomBytes } from 'node:crypto';
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
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
  const template = join(templateDir, `billing-pglite-${pgliteVersion()}-cluster.tar`);
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
