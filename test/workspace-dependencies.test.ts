// Every package a workspace imports is listed in that workspace's own package.json: one found only
// through npm's hoisting (the tool-host's prom-client was) works until the tree is laid out
// differently, e.g. by `npm ci --omit=dev` in the image. Source files need `dependencies`; tests
// and test helpers may use `devDependencies`.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const workspaces: string[] = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).workspaces;
// `from 'x'`, `import 'x'` and `import('x')`, type-only ones included: tsc resolves those too.
// A specifier holds no whitespace: a description string ending in `from " +` is no import.
const IMPORT = /(?:\bfrom\s+|^\s*import\s+|\bimport\s*\(\s*)['"]([^'".\s][^'"\s]*)['"]/gm;

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** Every .ts, .mts and .js file under `dir`, without dependencies, builds and fixtures. */
function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (['node_modules', 'dist', 'fixtures'].includes(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageOf = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

for (const workspace of workspaces) {
  t.test(`${workspace} lists every package it imports`, async (t) => {
    const dir = join(ROOT, workspace);
    const pkg: PackageJson = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    // Optional ones are imported only when present (tsx: the image leaves it out).
    const runtime = new Set(Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }));
    const dev = new Set([...runtime, ...Object.keys(pkg.devDependencies ?? {})]);
    const missing: string[] = [];
    for (const file of sources(dir)) {
      const path = relative(dir, file);
      const allowed = path.startsWith('src/') ? runtime : dev;
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(IMPORT)) {
        const name = packageOf(spec!);
        if (spec!.startsWith('node:') || builtinModules.includes(name) || name === pkg.name) continue;
        if (!allowed.has(name)) missing.push(`${path} imports ${name}`);
      }
    }
    t.strictSame(missing, [], `${pkg.name}: imports its package.json does not list`);
  });
}
