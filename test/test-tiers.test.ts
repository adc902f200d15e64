// The two test tiers (docs/guides/testing.md): `npm test` runs the fast tier, tap's default set with
// the full tier's patterns excluded (package.json `tap.exclude`); `npm run test:full` runs those
// patterns (package.json `scripts.test:full`). Both lists are the same, every test file is in
// exactly one tier, and every pattern names at least one file, so no test is silently skipped.
// The tiers run compiled (.tap-build/, scripts/build-tests.mjs): their scripts name `.test.js`
// files, `tap.exclude` the sources; run from the sources, this reads both as `.test.ts`.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The language of this run's test files: compiled in the mirror, the sources elsewhere. */
const EXT = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
const inRunLanguage = (pattern: string) => pattern.replace(/\.test\.[jt]s$/, `.test.${EXT}`);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
  tap: { exclude: string[]; jobs?: number };
};
/** What tap never runs as a test in either tier: helpers, fixtures, the bench. */
const NOT_TESTS = ['**/fixtures/**', '**/test/support/**', 'bench/**'];

/** The full tier's patterns as `test:full` passes them to tap (quoted so the shell leaves them). */
function fullPatterns(): string[] {
  const script = pkg.scripts['test:full'] ?? '';
  const tap = script.slice(script.lastIndexOf('tap ') + 4);
  return tap
    .split(/\s+/)
    .filter((w) => w && !w.startsWith('-'))
    .map((w) => inRunLanguage(w.replace(/^'(.*)'$/, '$1')));
}

/** The files `tap list` gives for these arguments: exactly what a run would start. */
function tapList(args: string[]): string[] {
  // Without this run's TAP_* variables, which would make the child a part of this run.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TAP')));
  const out = execFileSync(
    process.execPath,
    [join(ROOT, 'node_modules/tap/dist/esm/run.mjs'), 'list', ...args],
    {
      cwd: ROOT,
      encoding: 'utf8',
      env,
    },
  );
  return out.split('\n').filter(Boolean).sort();
}

/** Every test file of the repository: `*.test.*` anywhere, and any source file under `test/`. */
function allTests(dir = ROOT): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      if (['node_modules', 'dist', 'fixtures', 'support', 'bench', '.git', '.tap'].includes(name)) return [];
      if (name.startsWith('.')) return [];
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return allTests(path);
      const rel = relative(ROOT, path);
      // Compiled, each .ts has its .js beside it: the .js is the one that runs.
      if (EXT === 'js' && /\.m?ts$/.test(name)) return [];
      const inTestDir = rel.startsWith('test/') && /\.(ts|mts|js|mjs)$/.test(name);
      return /\.test\.(ts|mts|js|mjs)$/.test(name) || inTestDir ? [rel] : [];
    })
    .sort();
}

const patterns = fullPatterns();
const fast = tapList([]);
const full = tapList(patterns);

t.test('the full tier is what the fast tier leaves out', async (t) => {
  t.ok(patterns.length > 0, 'test:full names its patterns');
  t.strictSame(
    pkg.tap.exclude.filter((p) => !NOT_TESTS.includes(p)).map(inRunLanguage),
    patterns,
    'tap.exclude lists, after the helpers and fixtures, exactly the patterns test:full runs',
  );
  t.strictSame(pkg.tap.exclude.slice(0, NOT_TESTS.length), NOT_TESTS, 'helpers and fixtures come first');
});

t.test('every test file is in exactly one tier', async (t) => {
  const inBoth = fast.filter((f) => full.includes(f));
  t.strictSame(inBoth, [], 'no file runs in both tiers');
  const tiered = new Set([...fast, ...full]);
  t.strictSame(
    allTests().filter((f) => !tiered.has(f)),
    [],
    'no test file is left out of both tiers',
  );
  t.ok(fast.includes(`test/test-tiers.test.${EXT}`), 'this check is in the fast tier');
});

// A service started as a process (its `main`, through `npm start` or `npm run dev`, or the tool-host
// startMesh starts for a tools module or an MCP server) costs seconds of CPU at each start: the
// full tier's. A fast-tier file runs services in its own process (startMesh, startGateway).
const STARTS_A_PROCESS =
  /\b(startService|npmStart|startWalkthroughs|startPlannerAndHelperProcesses)\(|\btools(Module|Yaml)\s*:/;

t.test('no file of the fast tier starts a service as a process', async (t) => {
  const source = (f: string) => readFileSync(join(ROOT, f.replace(/\.js$/, '.ts')), 'utf8');
  t.strictSame(
    fast.filter((f) => STARTS_A_PROCESS.test(source(f))),
    [],
  );
});

// Compiled, this runs in the mirror, whose manifest scripts/build-tests.mjs wrote for the tiers.
t.test(
  'the tiers run as many test files at once as the machine has cores',
  { skip: EXT === 'ts' && 'run from the sources: the tiers run in the mirror' },
  async (t) => {
    t.equal(pkg.tap.jobs, availableParallelism(), "not tap's default, which leaves a core free");
  },
);

// `npm start` in the mirror (the full tier's start and image tests) builds the services when a
// source, directory or manifest is newer than the last build (scripts/build-if-stale.ts): what the
// mirror made or rewrote keeps its source's time, so a build up to date in the repository is in the
// mirror too, and a fresh mirror does not rebuild it.
t.test(
  "the mirror's directories, manifests and compiled files keep their sources' times",
  { skip: EXT === 'ts' && 'run from the sources: the tiers run in the mirror' },
  async (t) => {
    const repo = join(ROOT, '..');
    const mtime = (root: string, f: string) => statSync(join(root, f)).mtimeMs;
    for (const [made, source] of [
      ['services/gateway/src', 'services/gateway/src'],
      ['packages/shared/src/wire', 'packages/shared/src/wire'],
      ['package.json', 'package.json'],
      ['services/agent-runner/package.json', 'services/agent-runner/package.json'],
      ['services/gateway/src/app.js', 'services/gateway/src/app.ts'],
    ] as const)
      t.ok(Math.abs(mtime(ROOT, made) - mtime(repo, source)) < 1, `${made}: within a millisecond`);
  },
);

// A tier pattern as a regular expression: "**" then "/" is any folders, "*" any part of a name
// (all the patterns use); the last assertion below checks it reads them as tap does.
function globRegExp(glob: string): RegExp {
  const literal = (part: string) => part.replace(/[.+?^$()|[\]\\{}]/g, '\\$&').replaceAll('*', '[^/]*');
  return new RegExp(`^${glob.split('**/').map(literal).join('(?:.*/)?')}$`);
}

t.test('every pattern of the full tier names a test file', async (t) => {
  const files = allTests();
  for (const p of patterns)
    t.ok(
      files.some((f) => globRegExp(p).test(f)),
      `${p} matches a test file`,
    );
  t.strictSame(
    files.filter((f) => patterns.some((p) => globRegExp(p).test(f))),
    full,
    'the patterns read as tap reads them',
  );
});
