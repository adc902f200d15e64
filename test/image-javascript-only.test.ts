// The production image runs no TypeScript (docs/guides/deploying.md): its services are compiled, and so are the
// demo's tools and offline model, which it lays out as the Dockerfile does (the compiled demo over
// demo/, its docs beside) and runs with plain `node`, no loader; the image omits tsx, and a config
// naming a TypeScript module there gets a message saying what to do.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import YAML from 'yaml';
import { withoutCoverage } from './support/npm-start.js';
import { freePort } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

const ROOT = path.resolve(import.meta.dirname, '..');
// No coverage from these: compiled code maps back onto the sources, and its counts, merged with
// those of the sources run through the loader, would garble the report.
const env = (vars: Record<string, string> = {}) =>
  withoutCoverage({ ...process.env, NODE_OPTIONS: '', ...vars });
const node = (args: string[], cwd: string) =>
  execFileSync(process.execPath, args, { cwd, encoding: 'utf8', env: env() });

// What the image holds: the services' dist (`npm run build`), the demo compiled (`npm run build:demo`).
node(['--import', 'tsx', 'scripts/build-if-stale.ts'], ROOT);
const out = fs.mkdtempSync(path.join(os.tmpdir(), 'image-js-'));
t.teardown(() => fs.rmSync(out, { recursive: true, force: true }));
node(
  [path.join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.demo.build.json', '--outDir', out],
  ROOT,
);
// The Dockerfile's layout: COPY dist/demo → demo, demo/docs → demo/docs, dist/scripts → scripts.
const app = path.join(out, 'app');
fs.cpSync(path.join(out, 'demo'), path.join(app, 'demo'), { recursive: true });
fs.cpSync(path.join(ROOT, 'demo/docs'), path.join(app, 'demo/docs'), { recursive: true });
fs.cpSync(path.join(out, 'scripts'), path.join(app, 'scripts'), { recursive: true });
fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'));

t.test(
  'the compiled demo tools load and run under plain node, docs found where the image puts them',
  async (t) => {
    const tools = path.join(app, 'demo/tools/index.js');
    t.notOk(fs.existsSync(path.join(app, 'demo/tools/index.ts')), 'no TypeScript in the layout');
    const probe = `const m = await import(${JSON.stringify(tools)});
const hits = await m.searchDocs.run({ query: 'redis persistence' });
console.log(JSON.stringify({ names: Object.values(m).map((x) => x.name).sort(), hits: hits.length,
  sum: m.calculator.run({ expression: '2 + 3 * 4' }).result }));`;
    const seen = JSON.parse(node(['--conditions=agentmesh-dist', '--input-type=module', '-e', probe], app));
    t.same(seen.names, ['calculator', 'publish_note', 'search_docs']);
    t.ok(seen.hits > 0, 'search_docs reads the docs');
    t.equal(seen.sum, 14);
  },
);

t.test('the compiled demo model answers under plain node', async (t) => {
  const port = await freePort();
  const child = spawn(process.execPath, ['--conditions=agentmesh-dist', 'scripts/demo-model.js'], {
    cwd: app,
    env: env({ PORT: String(port), HOST: '127.0.0.1' }),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  t.teardown(() => child.kill('SIGKILL'));
  const status = await waitUntil(
    async () => (await fetch(`http://127.0.0.1:${port}/v1/models`).catch(() => undefined))?.status,
    30_000,
    () => `the demo model: ${stderr}`,
  );
  t.equal(status, 200);
});

t.test('compose points every service at the compiled demo and runs nothing through tsx', async (t) => {
  const compose = YAML.parse(fs.readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8'), { merge: true });
  for (const [name, s] of Object.entries<{ command?: string[]; environment?: Record<string, string> }>(
    compose.services,
  )) {
    t.notMatch(JSON.stringify(s.command ?? []), /tsx|\.ts"/, `${name} runs JavaScript`);
    if (s.environment?.MESH_CONFIG) t.equal(s.environment.DEMO_TOOLS, './demo/tools/index.js', name);
  }
  const meshYaml = fs.readFileSync(path.join(ROOT, 'mesh.yaml'), 'utf8');
  t.match(
    meshYaml,
    /tools: \["\$\{DEMO_TOOLS:-\.\/demo\/tools\/index\.ts\}"\]/,
    'mesh.yaml reads DEMO_TOOLS',
  );
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  t.match(dockerfile, /npm ci --omit=dev --omit=optional/, 'the image omits tsx (optional for shared)');
  t.match(dockerfile, /npm run build:demo/);
  const shared = JSON.parse(fs.readFileSync(path.join(ROOT, 'packages/shared/package.json'), 'utf8'));
  t.notOk(shared.dependencies.tsx, 'tsx is not a required dependency of shared');
  t.ok(shared.optionalDependencies.tsx);
});

t.test('without a TypeScript loader, a TypeScript module is refused with what to do', async (t) => {
  // The compiled importModule with tsx made unresolvable: what the image does with a .ts config entry.
  const probe = `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(
  "export async function resolve(s, c, n) { if (s.startsWith('tsx')) throw new Error('gone'); return n(s, c); }"));
const { importModule } = await import('@agentmesh/shared');
try { await importModule(${JSON.stringify(path.join(ROOT, 'demo/tools/index.ts'))}); console.log('loaded'); }
catch (e) { console.log(e.message); }`;
  const said = node(['--conditions=agentmesh-dist', '--input-type=module', '-e', probe], app);
  t.match(said, /is TypeScript and no TypeScript loader is installed .*compile it to JavaScript/);
});
