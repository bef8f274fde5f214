import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The shape of the code, held by a test (DESIGN.md, "Shape"; STYLE.md, "Shapes to avoid"):
 * no file-level import cycle in any package's sources; a service's `routes.ts` imported only
 * by its wiring (`service.ts`); no service importing another service. Imports are read with
 * the TypeScript compiler's own parser, type-only imports included: a cycle of types is still
 * two files that cannot be understood one without the other.
 */

const ROOT = resolve(__dirname, '..', '..', '..');
const PACKAGE_FOLDERS = ['libs', 'services'];

/** Every non-test source file of every package, by path from the repository's root. */
function sourceFiles(): string[] {
  const files: string[] = [];
  for (const folder of PACKAGE_FOLDERS) {
    for (const pkg of readdirSync(join(ROOT, folder))) {
      const src = join(ROOT, folder, pkg, 'src');
      if (statSync(src, { throwIfNoEntry: false })?.isDirectory()) walk(src, files);
    }
  }
  return files.map((file) => relative(ROOT, file));
}

function walk(dir: string, into: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, into);
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts'))
      into.push(path);
  }
}

/** The module specifiers a file imports or re-exports (static, dynamic and type-only alike). */
function importsOf(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const specifiers: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return specifiers;
}

/** A relative specifier as the file it names, if it is one of `known`. */
function resolveRelative(from: string, specifier: string, known: Set<string>): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = join(dirname(from), specifier);
  return [`${base}.ts`, `${base}.tsx`, join(base, 'index.ts')].find((candidate) => known.has(candidate));
}

type Graph = Map<string, string[]>;

function importGraph(files: string[]): Graph {
  const known = new Set(files);
  return new Map(
    files.map((file) => [file, importsOf(file).flatMap((specifier) => resolveRelative(file, specifier, known) ?? [])]),
  );
}

/** The strongly connected components of more than one file (Tarjan), each sorted. */
export function cyclesOf(graph: Graph): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const lowlinks = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string) => {
    indices.set(node, index);
    lowlinks.set(node, index++);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        connect(next);
        lowlinks.set(node, Math.min(lowlinks.get(node)!, lowlinks.get(next)!));
      } else if (onStack.has(next)) {
        lowlinks.set(node, Math.min(lowlinks.get(node)!, indices.get(next)!));
      }
    }
    if (lowlinks.get(node) !== indices.get(node)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!indices.has(node)) connect(node);
  return cycles;
}

const serviceOf = (file: string) => /^services\/([^/]+)\//.exec(file)?.[1];

/** A service's wiring: its `service.ts`, and the gateway's `Gateway` class, which its service.ts starts. */
const isWiring = (file: string) => file.endsWith('/src/service.ts') || file === 'services/gateway/src/gateway.ts';

describe('the shape of the code', () => {
  const files = sourceFiles();
  const graph = importGraph(files);

  it('reads the sources of every package', () => {
    expect(files.length).toBeGreaterThan(300);
    expect(files).toContain('services/billing/src/service.ts');
  });

  it('has no file-level import cycle', () => {
    expect(cyclesOf(graph)).toEqual([]);
  });

  it("imports a service's routes.ts only from its wiring (service.ts)", () => {
    const offenders = [...graph].flatMap(([file, targets]) =>
      targets
        .filter((target) => target.endsWith('/routes.ts') && serviceOf(target) && !isWiring(file))
        .map((target) => `${file} -> ${target}`),
    );
    expect(offenders).toEqual([]);
  });

  it('has no service importing another service', () => {
    const services = new Set(files.flatMap((file) => serviceOf(file) ?? []));
    const offenders = files.flatMap((file) => {
      const own = serviceOf(file);
      if (!own) return [];
      return importsOf(file)
        .filter((specifier) => specifier.startsWith('@billing/'))
        .map((specifier) => specifier.slice('@billing/'.length).split('/')[0]!)
        .filter((name) => name !== own && services.has(name))
        .map((name) => `${file} -> @billing/${name}`);
    });
    expect(offenders).toEqual([]);
  });
});

describe('cyclesOf', () => {
  it('finds each cycle once, and none in a tree', () => {
    const graph: Graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
    ]);
    expect(cyclesOf(graph)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(
      cyclesOf(
        new Map([
          ['a', ['b']],
          ['b', []],
        ]),
      ),
    ).toEqual([]);
  });
});
