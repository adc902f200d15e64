import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

// Every relative import of the source trees, type-only ones included: a cycle makes module
// evaluation order matter and the layout hard to read (issue 10).
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SOURCE_ROOTS = ['packages', 'services'].flatMap((top) =>
  readdirSync(join(ROOT, top)).map((name) => join(ROOT, top, name, 'src')),
);
const IMPORT = /^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm;

/** Every .ts file under `dir`. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

/** The source files `file` imports, by path (`./x.js` is `x.ts`). */
function importsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(IMPORT)) {
    const spec = (m[1] ?? m[2])!;
    const base = resolve(dirname(file), spec);
    const candidates = [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')];
    const target = candidates.find((c) => known.has(c));
    if (target) out.push(target);
  }
  return out;
}

/** The cycles of the graph, each as the files around it (depth-first, one report per back edge). */
function findImportCycles(graph: Map<string, string[]>): string[][] {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    state.set(node, 'open');
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') cycles.push([...stack.slice(stack.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(node, 'done');
  };
  for (const node of graph.keys()) if (!state.has(node)) visit(node);
  return cycles;
}

t.test('the cycle finder reports a cycle and accepts a chain', async (t) => {
  const cyclic = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
  ]);
  t.strictSame(findImportCycles(cyclic), [['a', 'b', 'c', 'a']]);
  t.strictSame(
    findImportCycles(
      new Map([
        ['a', ['b']],
        ['b', []],
      ]),
    ),
    [],
  );
});

t.test('no source file of a package or service imports itself through other files', async (t) => {
  const files = SOURCE_ROOTS.flatMap((dir) => (statSync(dir, { throwIfNoEntry: false }) ? sources(dir) : []));
  t.ok(files.length > 100, 'the source trees were found');
  const known = new Set(files);
  const graph = new Map(files.map((f) => [f, importsOf(f, known)]));
  const cycles = findImportCycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(' -> '));
  t.strictSame(cycles, []);
});
