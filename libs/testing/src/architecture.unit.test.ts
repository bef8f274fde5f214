import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

/**
 * The shape of the code, held by a test (DESIGN.md, "Shape"; STYLE.md, "Shapes to avoid"):
 * no file-level import cycle in any package's sources; a service's `routes.ts` imported only
 * by its wiring (`service.ts`); no service importing another service; billing's imports flowing
 * one way, routes -> engine -> aggregates, with no cycle between its folders. Imports are read with
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

/**
 * Billing's layers (DESIGN.md, "Subscriptions over time"): imports flow routes -> engine ->
 * aggregates -> libs. On top, the edge: every `routes.ts` (imported by the wiring alone, so it
 * belongs to no aggregate's folder), the wiring and the sweep at the top of `src/`, and the
 * consumers of the engine. Then the engine, `src/engine/`: the due-work scheduler, renewals and
 * dunning, switching. Below it, the aggregates and the ports they and the engine share: `charges/`
 * is the one charge port (the only caller of checkout's charges), `dependencies.ts` billing's
 * client of checkout. A folder of billing that is in none of these fails the test: decide its layer.
 */
const BILLING_SRC = 'services/billing/src/';
const BILLING_LAYERS = {
  edge: [
    'service.ts',
    'index.ts',
    'main.ts',
    'sweep.ts',
    'reconcile.ts',
    'provisioning',
    'direct',
    'portal',
    'dashboard',
    'entitlements',
    'metrics',
  ],
  engine: ['engine'],
  below: [
    'subscriptions',
    'customers',
    'credits',
    'invoices',
    'test-clocks',
    'settings',
    'calendar',
    'shared',
    'proration',
    'charges',
    // The e-invoice aggregates, their provider port and adapters, and the worker that drives
    // them: nothing of it reads a subscription's time, so it sits below the engine.
    'einvoices',
    // Meters, the usage events reported to them, and the worker that spends their credits: the
    // renewal engine reads usage, usage reads no subscription.
    'usage',
    'dependencies.ts',
  ],
};
type BillingLayer = keyof typeof BILLING_LAYERS;

/** A billing file's folder: the first segment of its path under `src/` (a file at the top: itself). */
const billingFolderOf = (file: string) => file.slice(BILLING_SRC.length).split('/')[0]!;

/** Where a billing file sits: `routes.ts` files on the edge, any other file where its folder is. */
function billingLayerOf(file: string): BillingLayer | undefined {
  if (file.endsWith('/routes.ts')) return 'edge';
  const folder = billingFolderOf(file);
  return (Object.keys(BILLING_LAYERS) as BillingLayer[]).find((layer) => BILLING_LAYERS[layer].includes(folder));
}

/** Billing's folders and what each imports from the others; every `routes.ts` counts as one more, `routes.ts`. */
export function folderGraphOf(graph: Graph, root: string): Graph {
  const folderOf = (file: string) =>
    file.endsWith('/routes.ts') ? 'routes.ts' : file.slice(root.length).split('/')[0]!;
  const folders = new Map<string, Set<string>>();
  for (const [file, targets] of graph) {
    if (!file.startsWith(root)) continue;
    const from = folderOf(file);
    const into = folders.get(from) ?? folders.set(from, new Set()).get(from)!;
    for (const target of targets) if (target.startsWith(root) && folderOf(target) !== from) into.add(folderOf(target));
  }
  return new Map([...folders].map(([folder, targets]) => [folder, [...targets].sort()]));
}

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

  describe("billing's layers: routes -> engine -> aggregates -> libs", () => {
    const billing = [...graph].filter(([file]) => file.startsWith(BILLING_SRC));
    const imports = (from: BillingLayer, into: BillingLayer[]) =>
      billing
        .filter(([file]) => billingLayerOf(file) === from)
        .flatMap(([file, targets]) =>
          targets.filter((target) => into.includes(billingLayerOf(target)!)).map((target) => `${file} -> ${target}`),
        );

    it('gives every folder of billing a layer', () => {
      expect(billing.length).toBeGreaterThan(80);
      expect(billing.filter(([file]) => !billingLayerOf(file)).map(([file]) => file)).toEqual([]);
    });

    it('imports the engine only from the engine and from the routes, consumers and wiring above it', () => {
      expect(imports('below', ['engine'])).toEqual([]);
    });

    it('keeps the aggregates and ports, and the engine, from importing the routes, consumers and wiring', () => {
      expect([...imports('below', ['edge']), ...imports('engine', ['edge'])]).toEqual([]);
    });

    it('has no import cycle between its folders', () => {
      expect(cyclesOf(folderGraphOf(graph, BILLING_SRC))).toEqual([]);
    });
  });
});

describe('folderGraphOf', () => {
  it('joins the files of a folder, leaves out imports inside one, and puts every routes.ts in one folder of its own', () => {
    const graph: Graph = new Map([
      ['s/src/a/one.ts', ['s/src/a/two.ts', 's/src/b/one.ts']],
      ['s/src/a/two.ts', ['s/src/top.ts']],
      ['s/src/a/routes.ts', ['s/src/engine/x.ts', 's/src/a/one.ts']],
      ['s/src/b/one.ts', []],
      ['s/src/top.ts', []],
      ['s/src/engine/x.ts', ['s/src/a/one.ts']],
      ['elsewhere/src/c.ts', ['s/src/a/one.ts']],
    ]);
    expect(folderGraphOf(graph, 's/src/')).toEqual(
      new Map([
        ['a', ['b', 'top.ts']],
        ['routes.ts', ['a', 'engine']],
        ['b', []],
        ['top.ts', []],
        ['engine', ['a']],
      ]),
    );
    expect(cyclesOf(folderGraphOf(graph, 's/src/'))).toEqual([]);
    graph.set('s/src/b/one.ts', ['s/src/engine/x.ts']);
    expect(cyclesOf(folderGraphOf(graph, 's/src/'))).toEqual([['a', 'b', 'engine']]);
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
