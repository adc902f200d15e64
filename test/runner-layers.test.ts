// The runner is split by where its code runs (docs/architecture/invocation-life.md): the loop
// (an activation's steps, decisions and stores), the queue (BullMQ's workers and the fast path) and
// the process (wiring, heartbeat, readiness, drain, metrics server), imported one way only:
// process → queue → loop. A part never imports one above it, so no two import each other.
// Every relative import counts, type-only and dynamic ones included (issue 30).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const SRC = fileURLToPath(new URL('../services/agent-runner/src/', import.meta.url));
/** The parts, lowest first: each may import its own files and those of the parts before it. */
const LAYERS = ['loop', 'queue', 'process'] as const;
/** The entry points above every part: the process's `main` and the package's barrel. */
const ENTRIES = ['main.ts', 'index.ts'];
const IMPORT = /(?:\bfrom\s+|^\s*import\s+|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"\s]+)['"]/gm;

/** Every .ts file under `dir`, relative to SRC. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [relative(SRC, path)] : [];
  });
}

/** A file's rank: its part's place in LAYERS, above them all for an entry point; -1 for neither. */
function rankOf(file: string): number {
  if (ENTRIES.includes(file)) return LAYERS.length;
  return LAYERS.indexOf(file.split('/')[0] as (typeof LAYERS)[number]);
}

/** The imports of `graph` (file → the files it imports) that go up the layers, as "from -> to". */
function upwardImports(graph: Map<string, string[]>): string[] {
  return [...graph].flatMap(([from, targets]) =>
    targets.filter((to) => rankOf(to) > rankOf(from)).map((to) => `${from} -> ${to}`),
  );
}

/** The source files `file` imports (`./x.js` is `x.ts`, a folder its index.ts), relative to SRC. */
function importsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(join(SRC, file), 'utf8');
  return [...text.matchAll(IMPORT)].flatMap(([, spec]) => {
    const base = relative(SRC, resolve(dirname(join(SRC, file)), spec!));
    const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
    return candidates.filter((c) => known.has(c)).slice(0, 1);
  });
}

t.test('the layer check refuses an import up the layers and accepts one down', async (t) => {
  const graph = new Map([
    ['process/runner.ts', ['queue/agent-worker.ts', 'loop/steps/delegate.ts']],
    ['queue/agent-worker.ts', ['loop/steps/run-activation.ts']],
    ['loop/steps/run-activation.ts', ['queue/fast-path/take-activation.ts']],
    ['loop/steps/delegate.ts', ['process/runner.ts', 'loop/store/activation-store.ts']],
    ['main.ts', ['process/runner.ts']],
  ]);
  t.strictSame(upwardImports(graph), [
    'loop/steps/run-activation.ts -> queue/fast-path/take-activation.ts',
    'loop/steps/delegate.ts -> process/runner.ts',
  ]);
});

t.test('every source file of the runner is in one part, or is an entry point', async (t) => {
  const files = sources(SRC);
  t.ok(files.length > 80, 'the runner sources were found');
  t.strictSame(
    files.filter((f) => rankOf(f) < 0),
    [],
    `files outside ${LAYERS.join('/, ')}/ and ${ENTRIES.join(', ')}`,
  );
});

t.test(
  'the loop imports nothing of the queue or the process, the queue nothing of the process',
  async (t) => {
    const files = sources(SRC);
    const known = new Set(files);
    const graph = new Map(files.map((f) => [f, importsOf(f, known)]));
    t.ok(
      graph.get('process/runner.ts')?.includes('queue/agent-worker.ts'),
      'imports are read (the wiring imports the worker)',
    );
    t.strictSame(upwardImports(graph), []);
  },
);
