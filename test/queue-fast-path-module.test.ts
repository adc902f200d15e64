// The queue fast path is one module (docs/architecture/queue-fast-path.md): the runner's
// services/agent-runner/src/queue/fast-path. Outside that folder, source code names them only in type-only imports (erased when
// compiled) and in the one dynamic import of the runner's entry point, so with
// MESH_QUEUE_FASTPATH=off none of it is loaded, and the gateway never loads it; and nothing
// outside them reads BullMQ's Lua.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const FAST_PATH = ['services/agent-runner/src/queue/fast-path/'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.d.ts') ? [path] : [];
  });
}

const files = ['packages', 'services']
  .flatMap((top) => readdirSync(join(ROOT, top)).map((name) => join(ROOT, top, name, 'src')))
  .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory())
  .flatMap(sources)
  .map((f) => relative(ROOT, f))
  .filter((f) => !FAST_PATH.some((dir) => f.startsWith(dir)));

const STATIC = /^\s*(import|export)(\s+type)?\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
const isFastPath = (spec: string) => /(^|\/)queue\/fast-path(\/|$)/.test(spec);

t.test('outside the fast path, its modules are imported for types only, or dynamically', async (t) => {
  t.ok(files.length > 100, 'the source trees were found');
  const valueImports: string[] = [];
  const dynamic: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    for (const m of text.matchAll(STATIC))
      if (
        isFastPath(m[3]!) &&
        m[2] === undefined &&
        !/^\s*import\s*\{\s*type\b[^}]*\}$/.test(m[0].split('from')[0]!)
      )
        valueImports.push(`${file}: ${m[0].trim()}`);
    for (const m of text.matchAll(DYNAMIC)) if (isFastPath(m[1]!)) dynamic.push(file);
  }
  t.same(valueImports, [], 'no value import of the fast path');
  t.same(
    dynamic.sort(),
    ['services/agent-runner/src/process/runner.ts'],
    "the runner's entry point loads it, once",
  );
});

t.test("outside the fast path, nothing reads BullMQ's Lua or its private members", async (t) => {
  const reaching = files.filter((file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');
    return /bullmq\/dist|bullmqScript|raw2NextJobData|nextJobFromJobData|processJob|blockingConnection|mainLoopQueue/.test(
      text,
    );
  });
  t.same(reaching, []);
});
