// What a newcomer does with `npm start`'s demo once it is ready, against the real processes: each
// runner's own metrics port (printed) with token counts; a planner tree failed on its budget logged
// as the API says it; an approval announced with the curl that decides it, which works; one tool
// run by hand with `npm run tool`; an A2A message sent with curl.
import { execFile } from 'node:child_process';
import { promisify, stripVTControlCharacters } from 'node:util';
import t from 'tap';
import { npmStart, startEnv, stopNpmStart, until } from './support/npm-start.js';
import { freePort } from './support/redis-server.js';

const run = promisify(execFile);
const ROOT = new URL('..', import.meta.url).pathname;

const gatewayPort = await freePort();
const toolHostPort = await freePort();
const metricsBase = await freePort();
const env = startEnv({
  GATEWAY_PORT: String(gatewayPort),
  TOOL_HOST_PORT: String(toolHostPort),
  REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
  RUNNER_METRICS_PORT: String(metricsBase),
  RUNNERS: '2',
  LOG_FORMAT: 'pretty',
});
const npm = npmStart(env);
t.teardown(() => stopNpmStart(npm));
const gateway = `http://127.0.0.1:${gatewayPort}`;
const plain = () => stripVTControlCharacters(npm.output());
await until('npm start to be ready', 240_000, () => {
  if (npm.exitCode !== null)
    throw new Error(`npm start exited (${npm.exitCode}):\n${npm.output().slice(-3000)}`);
  return plain().includes('Ctrl-C stops everything') ? true : undefined;
});

const post = async (path: string, body: unknown) => {
  const res = await fetch(`${gateway}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
};
/** Runs a command line as a shell would (the curls npm start prints are meant to be pasted). */
const shell = (line: string) => run('sh', ['-c', line], { cwd: ROOT, env, timeout: 60_000 });

t.test('each runner has its own metrics port, printed, and counts tokens by kind', async (t) => {
  const line = /runner metrics: runner-1 (http:\S+\/metrics), runner-2 (http:\S+\/metrics)/.exec(plain());
  t.ok(line, 'npm start prints both');
  const [one, two] = [line![1]!, line![2]!];
  t.equal(one, `http://127.0.0.1:${metricsBase}/metrics`, 'the first at RUNNER_METRICS_PORT');
  t.not(one, two, 'the second on another port');
  const res = await post('/agents/researcher/invoke?wait=60', { prompt: 'How does Redis persist data?' });
  t.equal(res.json.status, 'succeeded');
  const text = (await Promise.all([one, two].map((u) => fetch(u).then((r) => r.text())))).join('\n');
  const count = (kind: string) =>
    [...text.matchAll(new RegExp(`mesh_tokens_total\\{agent="researcher",kind="${kind}"\\} (\\d+)`, 'g'))]
      .map((m) => Number(m[1]))
      .reduce((a, b) => a + b, 0);
  t.equal(count('prompt'), res.json.usage.promptTokens, 'prompt tokens as the view counts them');
  t.equal(count('completion'), res.json.usage.completionTokens, 'completion tokens too');
});

t.test('a planner tree failed on its budget is logged as failed with budget_exceeded', async (t) => {
  const res = await post('/agents/planner/invoke?wait=60&budget=500', {
    prompt: 'How does Redis persist data, and how do BullMQ flows wait for children?',
  });
  t.match(res.json, { status: 'failed', error: { code: 'budget_exceeded' } });
  const line = await until('the planner finished line', 30_000, () =>
    plain()
      .split('\n')
      .find((l) => l.includes(`invocation finished agent=planner invocationId=${res.json.id} `)),
  );
  t.match(line, / status=failed .*error=\{"code":"budget_exceeded"/);
});

t.test('an approval is announced with the curl that decides it, and that curl works', async (t) => {
  const res = await post('/agents/publisher/invoke?wait=60', {
    prompt: 'Redis AOF is on from Monday. Tell the team.',
  });
  t.equal(res.status, 202, 'the wait ends as soon as a human must decide');
  t.equal(res.json.status, 'waiting');
  const approve = await until('the approval notice', 30_000, () => {
    const lines = plain().split('\n');
    const at = lines.findIndex((l) => l.includes(`approval requested: publisher (${res.json.id})`));
    return at < 0 ? undefined : lines[at + 1]?.replace(/^mesh\s+\|\s+/, '');
  });
  t.match(approve, `curl -s -X POST '${gateway}/invocations/${res.json.id}/approvals/t0-call0'`);
  const decided = JSON.parse((await shell(approve)).stdout);
  t.equal(decided.id, res.json.id);
  const done = await until('the publisher to finish', 30_000, async () => {
    const view = (await (await fetch(`${gateway}/invocations/${res.json.id}`)).json()) as any;
    return view.status === 'succeeded' ? view : undefined;
  });
  t.match(done.calls, [
    { kind: 'model' },
    { kind: 'tool', name: 'publish_note', status: 'succeeded' },
    { kind: 'model' },
  ]);
});

t.test(
  'npm run tool runs one tool through the tool-host, and lists the tools for an unknown name',
  async (t) => {
    const ok = await shell(`npm run -s tool -- calculator '{"expression": "2 * 21"}'`);
    t.strictSame(JSON.parse(ok.stdout), { expression: '2 * 21', result: 42 });
    const unknown = await shell('npm run -s tool -- nosuch').catch(
      (e: { code: number; stderr: string }) => e,
    );
    t.equal((unknown as { code: number }).code, 1);
    t.match(
      (unknown as { stderr: string }).stderr,
      `no tool is named nosuch; the tool-host at http://127.0.0.1:${toolHostPort} serves: calculator, publish_note, search_docs`,
    );
    const invalid = await shell(`npm run -s tool -- calculator '{"expr": 1}'`).catch(
      (e: { stderr: string }) => e,
    );
    t.match((invalid as { stderr: string }).stderr, /^calculator failed: invalid_input: Invalid arguments: /);
  },
);

t.test('an A2A message sent with curl gets the completed task with its answer', async (t) => {
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method: 'SendMessage',
    params: {
      message: { messageId: 'm-1', role: 'ROLE_USER', parts: [{ text: 'How does Redis persist data?' }] },
    },
  };
  const { stdout } = await shell(
    `curl -s -X POST '${gateway}/a2a/researcher' -H 'content-type: application/json' -H 'a2a-version: 1.0' -d '${JSON.stringify(body)}'`,
  );
  const task = JSON.parse(stdout).result.task;
  t.equal(task.status.state, 'TASK_STATE_COMPLETED');
  t.match(task.artifacts[0].parts[0].text, /^\[offline demo model\] .*Redis persistence/);
});
