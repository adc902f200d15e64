// `npm start` checks the config once, as the services would, before it starts anything (docs/reference/configuration.md):
// each problem once, exit 1 with the true reason — not every service failing on it, eight copies
// of the same problems, and "the gateway was not ready" a second later.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { inspectMeshConfig } from '../scripts/inspect-mesh-config.js';
import { npmStart, startEnv, stopNpmStart } from './support/npm-start.js';
import { freePort } from './support/redis-server.js';

const MODEL = `models:\n  default: {provider: openai, baseUrl: 'http://127.0.0.1:9/v1', apiKey: k, model: m}\n`;

/** A config file (and any modules beside it) in a fresh directory. */
function configFile(t: Test, text: string, files: Record<string, string> = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'config-check-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), content);
  const file = path.join(dir, 'mesh.yaml');
  fs.writeFileSync(file, text);
  return file;
}

const BROKEN = `${MODEL}tools: []
agents:
  a:
    instructions: hi
    model: nosuch
    subagents: [ghost]
    maxIterations: 0
`;

t.test('every problem of the file is found once', async (t) => {
  const file = configFile(t, BROKEN);
  const found = await inspectMeshConfig({ MESH_CONFIG: file });
  t.strictSame(found.problems, [
    `${file}: agents.a.maxIterations: expected integer to be greater or equal to 1`,
    `${file}: agents.a.model: unknown model "nosuch" (models: default)`,
    `${file}: agents.a.subagents[0]: unknown agent "ghost" (agents: a)`,
  ]);
});

t.test(
  'tools modules are loaded, every tool an agent names must exist, and the plan must build',
  async (t) => {
    const tools = `export const lookup = {name: 'lookup', description: 'Looks up.', input: {type: 'object'}, run: () => 1};\n`;
    const unknown = configFile(
      t,
      `${MODEL}tools: [./tools.mjs]\nagents:\n  a: {instructions: i, model: default, tools: [lookup, nope]}\n`,
      { 'tools.mjs': tools },
    );
    const seen = await inspectMeshConfig({ MESH_CONFIG: unknown });
    t.strictSame(seen.problems, [`${unknown}: agents.a.tools[1]: unknown tool "nope" (catalogue: lookup)`]);
    t.strictSame(seen.tools, ['lookup']);

    const broken = configFile(
      t,
      `${MODEL}tools: [./tools.mjs]\nagents:\n  a: {instructions: i, model: default}\n`,
      {
        'tools.mjs': 'throw new Error("the module fails at import");\n',
      },
    );
    t.match((await inspectMeshConfig({ MESH_CONFIG: broken })).problems, [
      /^.*mesh\.yaml: tools\[0\]: cannot load .*tools\.mjs: the module fails at import$/,
    ]);

    const cycle = configFile(
      t,
      `${MODEL}tools: []\nagents:\n  a: {instructions: i, model: default, subagents: [b]}\n  b: {instructions: i, model: default, subagents: [a]}\n`,
    );
    t.match((await inspectMeshConfig({ MESH_CONFIG: cycle })).problems, [
      /Cyclic sub-agent definition detected/,
    ]);
  },
);

t.test(
  'npm start with a broken config says each problem once and exits 1, having started nothing',
  async (t) => {
    const file = configFile(t, BROKEN);
    const npm = npmStart(
      startEnv({
        MESH_CONFIG: file,
        GATEWAY_PORT: String(await freePort()),
        TOOL_HOST_PORT: String(await freePort()),
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        LOG_FORMAT: 'pretty',
      }),
    );
    t.teardown(() => npm.kill());
    t.equal(await npm.exited, 1, 'it exits with 1');
    const output = npm.output();
    t.match(output, `mesh      | the config (${file}) has 3 problems:\n`);
    for (const problem of ['agents.a.maxIterations', 'agents.a.model', 'agents.a.subagents[0]'])
      t.equal(output.split(`${file}: ${problem}: `).length - 1, 1, `${problem} is said once`);
    t.match(output, 'nothing was started: fix the config');
    t.notMatch(
      output,
      /redis|tool-host\s+\||runner-\d|gateway\s+\||not ready/i,
      'no service, no Redis, no timeout',
    );
  },
);

t.test(
  'a service that refuses to start is named with its exit code, not taken for a slow start',
  async (t) => {
    // On all interfaces without MESH_API_KEYS or MESH_INTERNAL_TOKEN, the gateway and the tool-host refuse.
    const npm = npmStart(
      startEnv({
        HOST: '0.0.0.0',
        GATEWAY_PORT: String(await freePort()),
        TOOL_HOST_PORT: String(await freePort()),
        REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
        LOG_FORMAT: 'pretty',
      }),
    );
    t.teardown(() => stopNpmStart(npm));
    t.equal(await npm.exited, 1, 'it exits with 1');
    t.match(
      npm.output(),
      /mesh\s+\| (gateway|tool-host) exited unexpectedly \(exit code 1\); stopping the mesh/,
    );
    t.notMatch(npm.output(), /not ready within/);
  },
);
