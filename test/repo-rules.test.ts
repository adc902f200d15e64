// The repository's own rules, checked by reading its files (nothing runs but `git ls-files`, two
// `tap list` and, for fastify's controller, the services' tracing setup in this process): the runner's
// layers, no import cycles, the queue fast path as one module, every Redis key built in keys.ts,
// fastify's LogController subclassed and never patched, every workspace's imports in its own
// package.json, the locked packages' Node engines, docs a clone can read on its own, the two test
// tiers, and no timer a test races left pending. Each rule is a heading subtest below; the comment
// above it says why the rule holds.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules, createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join, normalize, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTracingWith, tracingOn } from '@agentmesh/shared';
import { LogController } from 'fastify';
import t from 'tap';
import { httpSpans } from '../services/gateway/src/tracing.js';
import { callerTrace } from '../services/tool-host/src/tracing.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** This file, as the repository names it (the tiers run it compiled, as `.test.js`). */
const THIS_FILE = 'test/repo-rules.test.ts';
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  workspaces: string[];
  scripts: Record<string, string>;
  tap: { exclude: string[]; jobs?: number };
};

/** Every file under `dir` whose name `keep` accepts, by path; a file or folder named in `skip` is left out. */
function filesUnder(dir: string, keep: (name: string) => boolean, skip: string[] = []): string[] {
  return readdirSync(dir).flatMap((name) => {
    if (skip.includes(name)) return [];
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path, keep, skip);
    return keep(name) ? [path] : [];
  });
}
const isTs = (name: string) => name.endsWith('.ts') && !name.endsWith('.d.ts');
const isScript = (name: string) => /\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts');
/** The `src/` folder of every package and service. */
const SOURCE_DIRS = ['packages', 'services']
  .flatMap((top) => readdirSync(join(ROOT, top)).map((name) => join(ROOT, top, name, 'src')))
  .filter((dir) => statSync(dir, { throwIfNoEntry: false })?.isDirectory());

// ---------------------------------------------------------------------------------------------------
// The runner is split by where its code runs (docs/architecture/invocation-life.md): the loop
// (an activation's steps, decisions and stores), the queue (BullMQ's workers and the fast path) and
// the process (wiring, heartbeat, readiness, drain, metrics server), imported one way only:
// process → queue → loop. A part never imports one above it, so no two import each other.
// Every relative import counts, type-only and dynamic ones included (issue 30).
const RUNNER_SRC = join(ROOT, 'services/agent-runner/src/');
/** The parts, lowest first: each may import its own files and those of the parts before it. */
const LAYERS = ['loop', 'queue', 'process'] as const;
/** The entry points above every part: the process's `main` and the package's barrel. */
const ENTRIES = ['main.ts', 'index.ts'];
const RELATIVE_IMPORT = /(?:\bfrom\s+|^\s*import\s+|\bimport\s*\(\s*)['"](\.{1,2}\/[^'"\s]+)['"]/gm;

/** Every .ts file of the runner, relative to RUNNER_SRC. */
const runnerSources = () => filesUnder(RUNNER_SRC, isTs).map((f) => relative(RUNNER_SRC, f));

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

/** The runner files `file` imports (`./x.js` is `x.ts`, a folder its index.ts), relative to RUNNER_SRC. */
function runnerImportsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(join(RUNNER_SRC, file), 'utf8');
  return [...text.matchAll(RELATIVE_IMPORT)].flatMap(([, spec]) => {
    const base = relative(RUNNER_SRC, resolve(dirname(join(RUNNER_SRC, file)), spec!));
    const candidates = [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
    return candidates.filter((c) => known.has(c)).slice(0, 1);
  });
}

t.test("the runner's parts import one way only: process → queue → loop", async (t) => {
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
    const files = runnerSources();
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
      const files = runnerSources();
      const known = new Set(files);
      const graph = new Map(files.map((f) => [f, runnerImportsOf(f, known)]));
      t.ok(
        graph.get('process/runner.ts')?.includes('queue/agent-worker.ts'),
        'imports are read (the wiring imports the worker)',
      );
      t.strictSame(upwardImports(graph), []);
    },
  );
});

// ---------------------------------------------------------------------------------------------------
// Every relative import of the source trees, type-only ones included: a cycle makes module
// evaluation order matter and the layout hard to read (issue 10).
const RELATIVE_STATIC_IMPORT =
  /^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"](\.[^'"]+)['"]|^\s*import\s+['"](\.[^'"]+)['"]/gm;

/** The source files `file` imports, by path (`./x.js` is `x.ts`). */
function sourceImportsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(RELATIVE_STATIC_IMPORT)) {
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

t.test('no import cycles in the source trees', async (t) => {
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
    const files = SOURCE_DIRS.flatMap((dir) => filesUnder(dir, isTs));
    t.ok(files.length > 100, 'the source trees were found');
    const known = new Set(files);
    const graph = new Map(files.map((f) => [f, sourceImportsOf(f, known)]));
    const cycles = findImportCycles(graph).map((c) => c.map((f) => relative(ROOT, f)).join(' -> '));
    t.strictSame(cycles, []);
  });
});

// ---------------------------------------------------------------------------------------------------
// The queue fast path is one module (docs/architecture/queue-fast-path.md): the runner's
// services/agent-runner/src/queue/fast-path. Outside that folder, source code names them only in type-only imports (erased when
// compiled) and in the one dynamic import of the runner's entry point, so with
// MESH_QUEUE_FASTPATH=off none of it is loaded, and the gateway never loads it; and nothing
// outside them reads BullMQ's Lua.
const FAST_PATH = ['services/agent-runner/src/queue/fast-path/'];
const STATIC_IMPORT = /^\s*(import|export)(\s+type)?\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
const isFastPath = (spec: string) => /(^|\/)queue\/fast-path(\/|$)/.test(spec);
/** The source files outside the fast path, relative to ROOT. */
const outsideFastPath = () =>
  SOURCE_DIRS.flatMap((dir) => filesUnder(dir, isTs))
    .map((f) => relative(ROOT, f))
    .filter((f) => !FAST_PATH.some((dir) => f.startsWith(dir)));

t.test('the queue fast path is one module, loaded only by the runner', async (t) => {
  const files = outsideFastPath();

  t.test('outside the fast path, its modules are imported for types only, or dynamically', async (t) => {
    t.ok(files.length > 100, 'the source trees were found');
    const valueImports: string[] = [];
    const dynamic: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(STATIC_IMPORT))
        if (
          isFastPath(m[3]!) &&
          m[2] === undefined &&
          !/^\s*import\s*\{\s*type\b[^}]*\}$/.test(m[0].split('from')[0]!)
        )
          valueImports.push(`${file}: ${m[0].trim()}`);
      for (const m of text.matchAll(DYNAMIC_IMPORT)) if (isFastPath(m[1]!)) dynamic.push(file);
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
});

// ---------------------------------------------------------------------------------------------------
// Every Redis key is built in packages/shared/src/keys.ts (docs/reference/redis-layout.md): this
// reads the source of every workspace for a key built anywhere else (issue 30). BullMQ's own Lua,
// which the fast path reads from the installed package, is not in any source tree, so nothing here
// needs an exception.
const KEYS = 'packages/shared/src/keys.ts';

/** What building a key looks like, each with an example it catches. */
const KEY_BUILDING: { pattern: RegExp; example: string }[] = [
  // A literal under the default prefixes: 'mesh:{recent}', `bull:agent-x:wait`.
  { pattern: /['"`](?:mesh|bull)[:{]/, example: "redis.get('mesh:{recent}')" },
  // A template starting from a layout's prefix.
  {
    pattern: /\$\{\s*[\w.]*\b(?:keys|layout)\.(?:prefix|bullPrefix)\s*\}/,
    example: `const k = \`\${keys.prefix}:x\`;`,
  },
  // A template appending to a key: `${queueKey}blocked`, `${job.parentKey}:dependencies`.
  {
    pattern: /\$\{\s*[\w.!?]*[a-z]Key!?\s*\}[\w:-]/,
    example: `const k = \`\${job.parentKey}:dependencies\`;`,
  },
  // Lua appending a suffix to a key: queueKey .. ':wait'.
  { pattern: /\.\.\s*(['"])[:][\w-]+\1/, example: "redis.call('LLEN', queueKey .. ':wait')" },
  // One of BullMQ's keys of a queue named by a literal suffix.
  { pattern: /\btoKey\(\s*['"`][^'"`]+['"`]/, example: "queue.toKey('stalled')" },
];

/** A .ts or .lua file (the Lua steps' keys come in KEYS, ARGV or the loader's constants). */
const isTsOrLua = (name: string) => isTs(name) || name.endsWith('.lua');

/** The lines of `text` that build a key, as "line: text". */
function keyBuildingLines(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line, i) =>
      KEY_BUILDING.some(({ pattern }) => pattern.test(line)) ? [`${i + 1}: ${line.trim()}`] : [],
    );
}

t.test('every Redis key is built in keys.ts', async (t) => {
  t.test('each pattern catches its example, and none an ordinary line', async (t) => {
    for (const { example } of KEY_BUILDING) t.equal(keyBuildingLines(example).length, 1, example);
    const ordinary = [
      `const label = \`step:\${name}\`;`,
      `const token = \`\${w.id}:h\${n}\`;`,
      `report(\`no \${key}: x\`)`,
    ];
    t.same(keyBuildingLines(ordinary.join('\n')), []);
  });

  t.test('no source file builds a Redis key outside keys.ts', async (t) => {
    const files = SOURCE_DIRS.flatMap((dir) => filesUnder(dir, isTsOrLua)).map((f) => relative(ROOT, f));
    t.ok(files.includes(KEYS) && files.length > 200, 'the source trees were found');
    t.ok(files.filter((f) => f.endsWith('.lua')).length > 20, 'the .lua files were found');
    t.ok(
      keyBuildingLines(readFileSync(join(ROOT, KEYS), 'utf8')).length > 0,
      'keys.ts itself is found building keys',
    );
    const elsewhere = files
      .filter((f) => f !== KEYS)
      .flatMap((f) => keyBuildingLines(readFileSync(join(ROOT, f), 'utf8')).map((line) => `${f}:${line}`));
    t.strictSame(elsewhere, []);
  });
});

// ---------------------------------------------------------------------------------------------------
// fastify's request lines get their trace ids through a subclass of its LogController, the extension
// point its docs give for them, never by rewriting the controller's methods in place (issue 30:
// no patching of a dependency outside the queue fast path; they once were, on the instance).
// fastify's own list: a method it adds is checked as soon as it ships.
const LOG_CONTROLLER_METHODS = Object.getOwnPropertyNames(LogController.prototype).filter(
  (m) => m !== 'constructor',
);

/** The methods of `controller` set on the instance itself, where a patch in place puts them. */
const ownMethods = (controller: object): string[] =>
  Object.entries(Object.getOwnPropertyDescriptors(controller))
    .filter(([, d]) => typeof d.value === 'function' || d.get !== undefined || d.set !== undefined)
    .map(([name]) => name);

/** Each class between `controller` and fastify's LogController, nearest first. */
const classesOf = (controller: object): string[] => {
  const out: string[] = [];
  for (
    let p = Object.getPrototypeOf(controller);
    p && p !== LogController.prototype;
    p = Object.getPrototypeOf(p)
  )
    out.push(p.constructor.name);
  return out;
};

t.test("fastify's LogController is subclassed, never patched", async (t) => {
  t.test(
    "the gateway and the tool-host hand fastify a LogController that is fastify's own class or a subclass, nothing rewritten on it",
    async (t) => {
      t.ok(
        LOG_CONTROLLER_METHODS.includes('incomingRequest') &&
          LOG_CONTROLLER_METHODS.includes('requestCompleted'),
        "fastify's methods",
      );
      // No other check of this file starts tracing; this one stops it again in its teardown.
      t.equal(tracingOn(), false);
      for (const [service, controller] of [
        ['gateway', httpSpans().logController],
        ['tool-host', callerTrace().logController],
      ] as const) {
        t.equal(
          Object.getPrototypeOf(controller),
          LogController.prototype,
          `${service}, tracing off: fastify's own`,
        );
        t.same(ownMethods(controller), [], `${service}, tracing off: no method on the instance`);
      }

      const tracing = await startTracingWith([]);
      t.teardown(() => tracing.shutdown());
      for (const [service, controller] of [
        ['gateway', httpSpans().logController],
        ['tool-host', callerTrace().logController],
      ] as const) {
        t.ok(controller instanceof LogController, `${service}, tracing on: a LogController`);
        t.same(classesOf(controller), ['TracedLogController'], `${service}: one subclass of it`);
        t.same(ownMethods(controller), [], `${service}: no method rewritten on the instance`);
      }
    },
  );

  t.test("no source file assigns to a method of fastify's LogController or to its prototype", async (t) => {
    // `x.incomingRequest = …`, `x['incomingRequest'] = …`, and any use of the class's prototype.
    const names = LOG_CONTROLLER_METHODS.join('|');
    const assignment = new RegExp(
      `(?:\\.\\s*(?:${names})|\\[\\s*['"\`](?:${names})['"\`]\\s*\\])\\s*(?:=(?![=>])|\\|\\|=|\\?\\?=)|LogController\\s*\\.\\s*prototype`,
    );
    const found: string[] = [];
    for (const file of [...SOURCE_DIRS, join(ROOT, 'scripts')].flatMap((dir) =>
      filesUnder(dir, isScript, ['node_modules', 'dist']),
    )) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (assignment.test(line)) found.push(`${relative(ROOT, file)}:${i + 1}: ${line.trim()}`);
        });
    }
    t.strictSame(found, [], 'override in a subclass instead (fastify docs: the logController option)');
  });
});

// ---------------------------------------------------------------------------------------------------
// Every package a workspace imports is listed in that workspace's own package.json: one found only
// through npm's hoisting (the tool-host's prom-client was) works until the tree is laid out
// differently, e.g. by `npm ci --omit=dev` in the image. Source files need `dependencies`; tests
// and test helpers may use `devDependencies`.
// `from 'x'`, `import 'x'` and `import('x')`, type-only ones included: tsc resolves those too.
// A specifier holds no whitespace: a description string ending in `from " +` is no import.
const PACKAGE_IMPORT = /(?:\bfrom\s+|^\s*import\s+|\bimport\s*\(\s*)['"]([^'".\s][^'"\s]*)['"]/gm;

interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

/** The package a bare specifier names: `@scope/name` or `name`, without a subpath. */
const packageOf = (spec: string) =>
  spec
    .split('/')
    .slice(0, spec.startsWith('@') ? 2 : 1)
    .join('/');

t.test('every workspace lists the packages it imports', async (t) => {
  for (const workspace of pkg.workspaces) {
    t.test(`${workspace} lists every package it imports`, async (t) => {
      const dir = join(ROOT, workspace);
      const manifest: PackageJson = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      // Optional ones are imported only when present (tsx: the image leaves it out).
      const runtime = new Set(Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }));
      const dev = new Set([...runtime, ...Object.keys(manifest.devDependencies ?? {})]);
      const missing: string[] = [];
      // Every .ts, .mts and .js file, without dependencies, builds and fixtures.
      for (const file of filesUnder(dir, isScript, ['node_modules', 'dist', 'fixtures'])) {
        const path = relative(dir, file);
        const allowed = path.startsWith('src/') ? runtime : dev;
        for (const [, spec] of readFileSync(file, 'utf8').matchAll(PACKAGE_IMPORT)) {
          const name = packageOf(spec!);
          if (spec!.startsWith('node:') || builtinModules.includes(name) || name === manifest.name) continue;
          if (!allowed.has(name)) missing.push(`${path} imports ${name}`);
        }
      }
      t.strictSame(missing, [], `${manifest.name}: imports its package.json does not list`);
    });
  }
});

// ---------------------------------------------------------------------------------------------------
// `engines.node` says which Node the mesh runs on; every locked package must run on all of it, or
// `npm ci` warns EBADENGINE (issue 9: cookie 2, content-disposition 3 and openai 7 want Node 22).
// semver is in node_modules already (npm's own range rules), untyped here.
const semver = createRequire(import.meta.url)('semver') as {
  minVersion(range: string): { version: string } | null;
  satisfies(version: string, range: string): boolean;
  subset(sub: string, dom: string): boolean;
};

t.test("the locked packages run on every Node package.json's engines admit", async (t) => {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
  };

  t.test("every locked package's engines admit every Node that package.json's engines admit", async (t) => {
    const ours = pkg.engines.node;
    const minimum = semver.minVersion(ours)!.version;
    t.equal(
      lock.packages['']!.engines && (lock.packages['']!.engines as { node: string }).node,
      ours,
      'the lock agrees',
    );
    const refused: string[] = [];
    for (const [path, entry] of Object.entries(lock.packages)) {
      const theirs = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (!path || !theirs) continue;
      if (!semver.satisfies(minimum, theirs) || !semver.subset(ours, theirs))
        refused.push(`${path}@${entry.version} wants node ${theirs}`);
    }
    t.strictSame(refused, [], `all of them run on node ${ours}`);
  });

  t.test('the Node running the tests is one package.json admits', async (t) => {
    t.ok(
      semver.satisfies(process.versions.node, pkg.engines.node),
      `${process.versions.node} in ${pkg.engines.node}`,
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// A clone explains itself (issue 30): no file cites a document outside the repo, every docs path a
// file cites exists, the README fits on a screen, and every page of docs/ is reachable from it.
const fileText = (f: string) => readFileSync(join(ROOT, f), 'utf8');

t.test('a clone explains itself: its docs are all in it and reachable', async (t) => {
  const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(
      (f) =>
        f &&
        existsSync(join(ROOT, f)) &&
        /\.(ts|tsx|mts|mjs|js|md|ya?ml|lua|json|css|html)$|Dockerfile$/.test(f),
    );
  // `.ci/run` runs the outside contract check when it is there: that is a check of the contract, not
  // documentation the project relies on. This file names the patterns it looks for, and is read
  // like any other: its examples are written so that they match none of them.
  const own = tracked.filter((f) => f !== '.ci/run');

  t.test('no file cites a design document outside the repo', async (t) => {
    const outside = /DESIGN(\.md|\s*§|\s+\d)|\.\.\/shared\//;
    const found = own.filter((f) => outside.test(fileText(f)));
    t.strictSame(found, [], 'files that cite DESIGN or ../shared');
  });

  t.test('every section reference names a document in the repo or a public standard', async (t) => {
    // A bare section sign ("§") and number points at a section of some document the reader has to
    // guess; name the file instead (docs/reference/bounds.md). Standards keep their own numbering:
    // RFC 6750 §3.
    const code = own.filter((f) => /\.(ts|tsx|mts|mjs|js|lua)$/.test(f) && !f.startsWith('bench/results/'));
    const bare = /(?<!(?:RFC \d+|ECMA-\d+) )§\s*\w/;
    t.strictSame(
      code.filter((f) => bare.test(fileText(f))),
      [],
      'code files with a section sign that names no document',
    );
  });

  t.test('every upstream contract number in code has an entry in the contracts page', async (t) => {
    // "upstream contract 14" means the numbered behaviour of Apache Flink Agents' sub-agent framework
    // that docs/reference/upstream-contracts.md lists under `### 14. …`; a file that cites one names
    // that page, so a reader of the file knows where the number resolves.
    const page = 'docs/reference/upstream-contracts.md';
    const entries = new Set([...fileText(page).matchAll(/^### (\d+)\. /gm)].map(([, n]) => Number(n)));
    const code = own.filter(
      (f) => /\.(ts|tsx|mts|mjs|js|lua|ya?ml)$/.test(f) && !f.startsWith('bench/results/'),
    );
    const cited = /\bcontracts?[ -](\d+(?:(?:,\s*|\s+and\s+)\d+)*)/gi;
    const unnamed: string[] = [];
    const unknown: string[] = [];
    for (const f of code) {
      const numbers = [...fileText(f).matchAll(cited)].flatMap(([, list]) =>
        list!.match(/\d+/g)!.map(Number),
      );
      if (numbers.length === 0) continue;
      if (!fileText(f).includes(page)) unnamed.push(f);
      for (const n of new Set(numbers)) if (!entries.has(n)) unknown.push(`${f}: contract ${n}`);
    }
    t.ok(entries.size > 0, `${page} has numbered entries`);
    t.strictSame(unnamed, [], `code files citing a contract number without naming ${page}`);
    t.strictSame(unknown, [], `contract numbers with no entry in ${page}`);
  });

  t.test('every docs path a file cites exists', async (t) => {
    const missing = new Set<string>();
    for (const f of own) {
      for (const [path] of fileText(f).matchAll(/\bdocs\/[\w./-]+\.md\b/g)) {
        if (!existsSync(join(ROOT, path))) missing.add(`${f}: ${path}`);
      }
    }
    t.strictSame([...missing], []);
  });

  // Test files are merged and renamed as the tiers are kept fast (docs/guides/testing.md): a
  // comment or page that names a test file by its path from the root must name one that exists.
  // The saved bench runs are history and keep the names of their day.
  t.test('every test file a file names exists', async (t) => {
    const files = new Set(tracked);
    const missing = new Set<string>();
    for (const f of own.filter((f) => !f.startsWith('bench/results/'))) {
      const named = /(?<![\w/.-])(?:(?:packages|services)\/[\w-]+\/)?test\/[\w/.-]+\.test\.ts\b/g;
      for (const [path] of fileText(f).matchAll(named)) {
        if (!files.has(path)) missing.add(`${f}: ${path}`);
      }
    }
    t.strictSame([...missing], []);
  });

  t.test('the README fits on a screen and reaches every page of docs/', async (t) => {
    const readme = fileText('README.md');
    t.ok(readme.split('\n').length <= 200, `README.md has ${readme.split('\n').length} lines`);
    const pages = tracked.filter((f) => f.startsWith('docs/') && f.endsWith('.md'));
    const seen = new Set<string>();
    const visit = (file: string) => {
      if (seen.has(file) || !existsSync(join(ROOT, file))) return;
      seen.add(file);
      for (const [, link] of fileText(file).matchAll(/\]\(([^)#\s]+\.md)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/.test(link!)) continue;
        visit(normalize(join(dirname(file), link!)));
      }
    };
    visit('README.md');
    t.strictSame(
      pages.filter((p) => !seen.has(p)),
      [],
      'pages no link path from the README reaches',
    );
  });
});

// ---------------------------------------------------------------------------------------------------
// The two test tiers (docs/guides/testing.md): `npm test` runs the fast tier, tap's default set with
// the full tier's patterns excluded (package.json `tap.exclude`); `npm run test:full` runs those
// patterns (package.json `scripts.test:full`). Both lists are the same, every test file is in
// exactly one tier, and every pattern names at least one file, so no test is silently skipped.
// The tiers run compiled (.tap-build/, scripts/build-tests.mjs): their scripts name `.test.js`
// files, `tap.exclude` the sources; run from the sources, this reads both as `.test.ts`.
/** The language of this run's test files: compiled in the mirror, the sources elsewhere. */
const EXT = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
const inRunLanguage = (pattern: string) => pattern.replace(/\.test\.[jt]s$/, `.test.${EXT}`);
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

// A service started as a process (its `main`, through `npm start` or `npm run dev`, or the tool-host
// startMesh starts for a tools module or an MCP server) costs seconds of CPU at each start: the
// full tier's. A fast-tier file runs services in its own process (startMesh, startGateway).
const STARTS_A_PROCESS =
  /\b(startService|npmStart|startWalkthroughs|startPlannerAndHelperProcesses)\(|\btools(Module|Yaml)\s*:/;

// A tier pattern as a regular expression: "**" then "/" is any folders, "*" any part of a name
// (all the patterns use); the last assertion below checks it reads them as tap does.
function globRegExp(glob: string): RegExp {
  const literal = (part: string) => part.replace(/[.+?^$()|[\]\\{}]/g, '\\$&').replaceAll('*', '[^/]*');
  return new RegExp(`^${glob.split('**/').map(literal).join('(?:.*/)?')}$`);
}

t.test('the two test tiers', async (t) => {
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
    t.ok(fast.includes(inRunLanguage(THIS_FILE)), 'this check is in the fast tier');
  });

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
});

// ---------------------------------------------------------------------------------------------------
// A timer raced against a promise keeps its process alive until it fires, long after the race was
// decided (docs/guides/testing.md): a test clears it (`atMost()` of test/support/npm-start.ts) or
// unrefs it, and never races a bare `sleep()`. Such races held four full-tier files for up to
// 30 s each after their last test.
const RACED_SLEEP = /Promise\.race\(\[[^\]]*?\bsleep\(/;
const isComment = (line: string) => /^\s*(\/\/|\/?\*)/.test(line);

t.test('no test races a bare sleep, whose timer would outlive the race', async (t) => {
  t.test('the pattern catches a raced sleep, and neither a cleared nor an unrefed timer', async (t) => {
    t.match('await Promise.race([npm.exited, sleep(30_000)]);', RACED_SLEEP);
    t.match('await Promise.race([\n  outputEnded,\n  sleep(5000),\n]);', RACED_SLEEP);
    t.notMatch('await atMost(npm.exited, 30_000);', RACED_SLEEP);
    t.notMatch('Promise.race([p, new Promise((r) => setTimeout(r, 5000).unref())]); sleep(1)', RACED_SLEEP);
  });

  t.test('no test file or test helper races one', async (t) => {
    const testDirs = [
      join(ROOT, 'test'),
      ...['packages', 'services'].flatMap((top) =>
        readdirSync(join(ROOT, top))
          .map((name) => join(ROOT, top, name, 'test'))
          .filter((dir) => existsSync(dir)),
      ),
    ];
    const racing = testDirs
      .flatMap((dir) => filesUnder(dir, isTs, ['node_modules']))
      .map((file) => relative(ROOT, file))
      .filter((file) => file !== THIS_FILE)
      .filter((file) => {
        const code = fileText(file)
          .split('\n')
          .filter((line) => !isComment(line))
          .join('\n');
        return RACED_SLEEP.test(code);
      });
    t.strictSame(racing, []);
  });
});
