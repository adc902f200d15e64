// `npm run dev` (docs/guides/getting-started.md) on a newcomer's own config: an agent with a tool of its own and a
// sub-agent, run offline by the demo model; then each edit restarts only what it affects, says what
// it saw, lists a broken config's problems while the mesh goes on, and never restarts Redis or the
// demo model.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify, stripVTControlCharacters } from 'node:util';
import t from 'tap';
import { npmStart, processes, startEnv, stopNpmStart, until } from './support/npm-start.js';
import { freePort } from './support/redis-server.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dev-loop-'));
t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
const write = (name: string, text: string) => fs.writeFileSync(path.join(dir, name), text);

const CONFIG = `models:
  default: {provider: openai, baseUrl: "\${MODEL_BASE_URL:-http://127.0.0.1:3001/v1}", apiKey: "\${OPENAI_API_KEY:-}", model: demo}
toolHost: \${TOOL_HOST_URL:-http://127.0.0.1:3002}
tools: [./tools.mjs]
agents:
  assistant:
    description: Answers weather questions.
    instructions: You answer weather questions.
    model: default
    tools: [get_weather]
    subagents: [helper]
  helper:
    description: Helps with anything.
    instructions: You help.
    model: default
`;
write('mesh.yaml', CONFIG);
write('forecast.mjs', "export const forecast = (city) => 'sunny in ' + city;\n");
write(
  'tools.mjs',
  `import { forecast } from './forecast.mjs';
export const getWeather = {
  name: 'get_weather',
  description: 'The weather of a city.',
  input: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  run: ({ city }) => ({ city, forecast: forecast(city) }),
};
`,
);

const gatewayPort = await freePort();
const toolHostPort = await freePort();
const env = startEnv({
  MESH_CONFIG: path.join(dir, 'mesh.yaml'),
  GATEWAY_PORT: String(gatewayPort),
  TOOL_HOST_PORT: String(toolHostPort),
  REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
  LOG_FORMAT: 'pretty',
});
const npm = npmStart(env, ['run', 'dev']);
t.teardown(() => stopNpmStart(npm));
const gateway = `http://127.0.0.1:${gatewayPort}`;
const plain = () => stripVTControlCharacters(npm.output());
await until('npm run dev to watch', 240_000, () => {
  if (npm.exitCode !== null)
    throw new Error(`npm run dev exited (${npm.exitCode}):\n${npm.output().slice(-3000)}`);
  return plain().includes('watching the config and the files it loads') ? true : undefined;
});

/** The pid of each service of the mesh, and of its private Redis. */
function pids(): { toolHost: number[]; runners: number[]; gateway: number[]; redis: number[] } {
  const group = processes('-g', String(npm.pgid));
  const of = (main: string) => group.filter((p) => p.includes(main)).map((p) => Number(p.split(' ')[0]));
  const redisPort = /private Redis ready at redis:\/\/127\.0\.0\.1:(\d+)/.exec(plain())?.[1];
  return {
    toolHost: of('services/tool-host/dist/main.js'),
    runners: of('services/agent-runner/dist/main.js').sort(),
    gateway: of('services/gateway/dist/main.js'),
    redis: processes('-e')
      .filter((p) => p.includes(`redis-server 127.0.0.1:${redisPort}`))
      .map((p) => Number(p.split(' ')[0])),
  };
}

/** The output from `mark` on, once it holds `text` (the restart's last line). */
async function after(mark: number, text: string): Promise<string> {
  return until(`"${text}"`, 120_000, () => {
    const now = plain().slice(mark);
    return now.includes(text) ? now : undefined;
  });
}

const invoke = async (agent: string, prompt: string) => {
  const res = await fetch(`${gateway}/agents/${agent}/invoke?wait=60`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt }),
  });
  return (await res.json()) as any;
};

t.test("the demo model runs the newcomer's agent: the tool and the sub-agent the prompt names", async (t) => {
  t.match(plain(), `Try assistant:\n\ncurl -s -X POST '${gateway}/agents/assistant/invoke?wait=60'`);
  const view = await invoke('assistant', 'What is the weather in Lyon? Use get_weather, then ask helper.');
  t.equal(view.status, 'succeeded');
  t.match(
    view.calls.map((c: any) => [c.kind, c.name, c.status]),
    [
      ['model', 'default', 'succeeded'],
      ['tool', 'get_weather', 'succeeded'],
      ['subagent', 'helper', 'succeeded'],
      ['model', 'default', 'succeeded'],
    ],
  );
  t.match(view.output, /^\[offline demo model\] /);
  t.match(view.output, 'forecast: sunny in');
});

t.test("a change to a tool's code restarts the tool-host alone", async (t) => {
  const before = pids();
  const mark = plain().length;
  write('forecast.mjs', "export const forecast = (city) => 'rainy in ' + city;\n");
  const out = await after(mark, 'restarted tool-host in');
  t.match(out, 'saw a change: forecast.mjs (tools); checking the config');
  t.match(out, 'restarting tool-host (Redis and the model keep running)');
  const now = pids();
  t.not(now.toolHost[0], before.toolHost[0], 'a new tool-host');
  t.strictSame(
    [now.runners, now.gateway, now.redis],
    [before.runners, before.gateway, before.redis],
    'nothing else',
  );
  const { stdout } = await run('npm', ['run', '-s', 'tool', '--', 'get_weather', '{"city": "Lyon"}'], {
    cwd: ROOT,
    env,
  });
  t.strictSame(JSON.parse(stdout), { city: 'Lyon', forecast: 'rainy in Lyon' }, 'the new code runs');
});

t.test('a broken config is reported, problem by problem, and the mesh goes on as it was', async (t) => {
  const before = pids();
  const mark = plain().length;
  write('mesh.yaml', CONFIG.replace('tools: [get_weather]', 'tools: [get_wether]\n    maxIterations: 0'));
  const out = await after(mark, 'the services keep running the last good one:');
  t.match(out, 'saw a change: mesh.yaml (config); checking the config');
  await until('the problems', 10_000, () =>
    plain().slice(mark).includes('agents.assistant.maxIterations') ? true : undefined,
  );
  t.match(plain().slice(mark), `${dir}/mesh.yaml: agents.assistant.maxIterations: expected integer`);
  t.notMatch(plain().slice(mark), /restarting/);
  t.strictSame(pids(), before, 'no service restarted');
  t.equal((await fetch(`${gateway}/readyz`)).status, 200);
});

t.test('the fixed config with a new agent restarts the runners and the gateway', async (t) => {
  const before = pids();
  const mark = plain().length;
  write(
    'mesh.yaml',
    `${CONFIG}  greeter:\n    description: Says hello.\n    instructions: You greet.\n    model: default\n`,
  );
  const out = await after(mark, 'restarted runners, gateway in');
  t.match(out, 'restarting runners, gateway (Redis and the model keep running)');
  const now = pids();
  t.equal(now.toolHost[0], before.toolHost[0], 'the tool-host goes on');
  t.strictSame(now.redis, before.redis, 'Redis goes on');
  t.not(now.gateway[0], before.gateway[0], 'a new gateway');
  t.equal(now.runners.length, 2);
  t.notOk(
    now.runners.some((p) => before.runners.includes(p)),
    'new runners',
  );
  const agents = (await (await fetch(`${gateway}/agents`)).json()) as { agents: { name: string }[] };
  t.strictSame(
    agents.agents.map((a) => a.name),
    ['assistant', 'helper', 'greeter'],
  );
  t.equal(plain().split('OFFLINE DEMO MODEL at').length, 2, 'the demo model was started once');
  t.equal((await invoke('greeter', 'hello')).status, 'succeeded');
});
