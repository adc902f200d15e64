// `npm run dev` restarts only what a change affects (docs/guides/getting-started.md): which files belong to which part
// (the imports each part's modules make, found by the config check), and which parts a change
// restarts.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { checkConfigApart } from '../scripts/check-config-apart.js';
import {
  type CheckedConfig,
  type FileRole,
  uncheckedConfig,
  watchedFiles,
} from '../scripts/checked-config.js';
import { planRestarts } from '../scripts/plan-restarts.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

const config = (over: Partial<CheckedConfig> = {}): CheckedConfig => ({
  ...uncheckedConfig('/x/mesh.yaml', ''),
  problems: [],
  catalogue: '[{"name":"t"}]',
  toolEntries: '["/x/tools.ts"]',
  ...over,
});
const plan = (roles: FileRole[], next: Partial<CheckedConfig> = {}) =>
  planRestarts(new Set(roles), config(), config(next));

t.test('which parts a change restarts', async (t) => {
  t.strictSame(plan(['tools']), ['tool-host'], "a tool's code: the tool-host alone");
  t.strictSame(
    plan(['tools'], { catalogue: '[{"name":"t","x":1}]' }),
    ['tool-host', 'runners'],
    'a tool schema: runners too',
  );
  t.strictSame(plan(['config']), ['runners', 'gateway'], 'the config: runners and the gateway');
  t.strictSame(plan(['config'], { toolEntries: '["/x/other.ts"]' }), ['tool-host', 'runners', 'gateway']);
  t.strictSame(plan(['agents']), ['runners', 'gateway'], "a code agent's module");
  t.strictSame(plan([]), [], 'nothing');
});

t.test(
  'each part owns the local files its modules import, not node_modules nor the mesh packages',
  async (t) => {
    const imports = new Map([
      ['/p/mesh.yaml', new Set<string>()],
      [
        '/p/tools.ts',
        new Set(['/p/lib/util.ts', '/p/node_modules/zod/index.js', '/mesh/packages/shared/src/index.ts']),
      ],
      ['/p/agents/a.ts', new Set(['/p/lib/util.ts'])],
      ['/p/lib/util.ts', new Set(['/p/lib/deep.ts', '/p/tools.ts'])],
    ]);
    const watched = watchedFiles(
      { config: '/p/mesh.yaml', tools: ['/p/tools.ts'], agents: ['/p/agents/a.ts'] },
      imports,
      ['/mesh/packages/'],
    );
    t.strictSame(watched, {
      '/p/mesh.yaml': ['config'],
      '/p/tools.ts': ['tools', 'agents'],
      '/p/lib/util.ts': ['tools', 'agents'],
      '/p/lib/deep.ts': ['tools', 'agents'],
      '/p/agents/a.ts': ['agents'],
    });
  },
);

t.test('the check, in a process of its own, finds what the config and its modules import', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dev-check-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.writeFileSync(path.join(dir, 'helper.mjs'), 'export const twice = (n) => 2 * n;\n');
  fs.writeFileSync(
    path.join(dir, 'tools.mjs'),
    "import { twice } from './helper.mjs';\nexport const double = {name: 'double', description: 'Doubles.', input: {type: 'object'}, run: ({n}) => twice(n)};\n",
  );
  fs.writeFileSync(
    path.join(dir, 'mesh.yaml'),
    "models:\n  default: {provider: openai, baseUrl: 'http://127.0.0.1:9/v1', apiKey: k, model: m}\ntools: [./tools.mjs]\nagents:\n  a: {instructions: i, model: default, tools: [double]}\n",
  );
  const env = { ...process.env, MESH_CONFIG: path.join(dir, 'mesh.yaml') };
  const checked = await checkConfigApart(env, ROOT);
  t.strictSame(checked.problems, []);
  t.strictSame(checked.watched, {
    [path.join(dir, 'mesh.yaml')]: ['config'],
    [path.join(dir, 'tools.mjs')]: ['tools'],
    [path.join(dir, 'helper.mjs')]: ['tools'],
  });
  t.strictSame(checked.tools, ['double']);
  t.strictSame(checked.agents, [{ name: 'a', input: JSON.parse(JSON.stringify(checked.agents[0]!.input)) }]);
  t.match(checked.agents[0]!.input, { properties: { prompt: { type: 'string' } } });

  // A module that never finishes loading (here: one loaded first, through NODE_OPTIONS).
  const hang = '--import=data:text/javascript,setInterval(()=>{},1e3);await%20new%20Promise(()=>{})';
  const slow = await checkConfigApart({ ...env, NODE_OPTIONS: hang }, ROOT, 3000);
  t.strictSame(
    slow.problems,
    [`${env.MESH_CONFIG}: checking the config took longer than 3 s`],
    'is a problem itself',
  );
});
