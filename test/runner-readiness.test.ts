// A runner's `GET /readyz` (docs/guides/deploying.md: compose's healthcheck): 200 `{status: 'ready'}` while its
// workers take jobs and its Redis answers; else 503 `unavailable` naming what is missing, the body
// the gateway's and tool-host's `/readyz` give: while it drains after SIGTERM, while Redis hangs or
// is gone. A runner still waiting for the tool catalogue stops at once on SIGTERM.
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh, startService } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { startTcpProxy } from './support/tcp-proxy.js';
import { waitUntil } from './support/wait-until.js';

const agentsYaml = `
  solo: {instructions: "@agent solo", tools: [gate]}
`;

/** GET `url` (2 s at most: longer than the runner's 1 s Redis PING) and its JSON body. */
const get = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(2000) }).then(async (r) => ({
    status: r.status,
    json: (await r.json()) as any,
  }));

/** Polls `url` until it answers `status`, and returns that answer. */
const answer = (url: string, status: number, what: () => string) =>
  waitUntil(
    async () => {
      const res = await get(url);
      return res.status === status ? res : undefined;
    },
    60_000,
    what,
  );

/** The 503 body naming `problems`, as the gateway and tool-host send it. */
const notReady = (...problems: string[]) => ({
  error: {
    code: 'unavailable',
    message: `Not ready: ${problems.join('; ')}.`,
    details: problems.map((message) => ({ path: '/', message })),
  },
});

/** A tool that holds its call until the test opens it; `entered` resolves when a call arrives. */
function gateTool() {
  let open = () => {};
  let entered = () => {};
  const opened = new Promise<void>((r) => (open = r));
  const arrived = new Promise<void>((r) => (entered = r));
  const tool = {
    name: 'gate',
    description: 'Waits.',
    input: { type: 'object', properties: {} },
    timeoutMs: 120_000,
    run: async () => {
      entered();
      await opened;
      return 'opened';
    },
  };
  return { tool, open, arrived };
}

t.test('a runner process is ready while it runs, and not ready while it drains after SIGTERM', async (t) => {
  const gate = gateTool();
  const mesh = await startMesh(t, {
    runners: 0,
    agentsYaml,
    tools: [gate.tool],
    script: (r) => (turnOf(r) === 0 ? { calls: [{ name: 'gate', args: {} }] } : { final: 'done' }),
  });
  const port = await freePort();
  const runner = startService(t, 'runner', {
    ...mesh.env,
    RUNNER_METRICS_PORT: String(port),
    RUNNER_DRAIN_MS: '120000',
  });
  t.teardown(gate.open); // a failed test must not leave the drain waiting on the tool
  const readyz = `http://127.0.0.1:${port}/readyz`;
  const ready = await answer(readyz, 200, () => runner.output());
  t.strictSame(ready.json, { status: 'ready' });
  t.equal((await fetch(readyz, { method: 'POST' })).status, 405);
  const started = await mesh.invoke('solo', { prompt: 'go' }, 'wait=0');
  await gate.arrived;
  process.kill(-runner.proc.pid!, 'SIGTERM');
  const draining = await answer(readyz, 503, () => `a 503 while draining: ${runner.output()}`);
  t.strictSame(draining.json, notReady('the runner is draining and takes no new jobs'));
  t.equal((await get(`http://127.0.0.1:${port}/healthz`)).status, 200, 'still alive while it drains');
  gate.open();
  t.equal(await runner.exited, 0, 'the drain ends');
  t.equal(
    (await mesh.get(`/invocations/${started.json.id}`)).json.status,
    'succeeded',
    'the job it held finished',
  );
});

// A runner process, killed at teardown: a graceful close right after a reconnect can wait on
// BullMQ's blocking connection, which is not what this test is about.
t.test('a runner whose Redis hangs or is gone is not ready until Redis answers again', async (t) => {
  const mesh = await startMesh(t, { runners: 0, agentsYaml, tools: [gateTool().tool] });
  // The runner reaches Redis through a proxy the test can freeze (a Redis that accepts and never
  // answers) or cut (a Redis that is gone); the rest of the mesh keeps its own connections.
  const proxy = await startTcpProxy(mesh.redis.port);
  t.teardown(() => proxy.close());
  const port = await freePort();
  const runner = startService(t, 'runner', {
    ...mesh.env,
    REDIS_URL: proxy.url,
    RUNNER_METRICS_PORT: String(port),
  });
  const readyz = `http://127.0.0.1:${port}/readyz`;
  t.strictSame((await answer(readyz, 200, () => runner.output())).json, { status: 'ready' });

  proxy.hold();
  const hung = await answer(readyz, 503, () => `a 503 while Redis hangs: ${runner.output()}`);
  t.strictSame(hung.json, notReady('Redis is unreachable'));
  proxy.release();
  t.strictSame((await answer(readyz, 200, () => 'ready again')).json, { status: 'ready' });

  proxy.cut();
  const gone = await answer(readyz, 503, () => `a 503 while Redis is gone: ${runner.output()}`);
  t.strictSame(gone.json, notReady('Redis is unreachable'));
  proxy.release();
  t.strictSame((await answer(readyz, 200, () => 'ready after a reconnect')).json, { status: 'ready' });
});

// A runner still waiting for the tool-host's catalogue holds no job: SIGTERM (npm start stopping
// the mesh after another service failed, or Ctrl-C during the start) ends it at once, instead of
// leaving it to wait for a catalogue that will not come until its supervisor's SIGKILL.
t.test('a runner still waiting for the tool catalogue exits at once on SIGTERM', async (t) => {
  const mesh = await startMesh(t, { runners: 0, agentsYaml, tools: [gateTool().tool] });
  // Another prefix: no tool-host publishes a catalogue under it.
  const runner = startService(t, 'runner', { ...mesh.env, MESH_PREFIX: 'no-catalogue', LOG_LEVEL: 'info' });
  await waitUntil(
    async () => runner.output().includes('waiting for the tool-host to publish its catalogue'),
    60_000,
    () => `the runner waiting for the catalogue: ${runner.output()}`,
  );
  process.kill(-runner.proc.pid!, 'SIGTERM');
  const code = await Promise.race([
    runner.exited,
    new Promise<string>((r) => setTimeout(() => r('still running after 10 s'), 10_000).unref()),
  ]);
  t.equal(code, 0, 'it exits with 0', { output: runner.output() });
  t.notMatch(runner.output(), /FATAL|failed to start/, 'no failure is reported');
});
