// Mounted MCP servers that go away (docs/guides/mcp.md): a dead stdio server is restarted and a dropped
// HTTP one reconnected; while one is down its tools fail at once with a reason and the tool-host's
// /readyz names it; a call in flight when its server dies is in doubt (docs/guides/durability.md).
import fs from 'node:fs';
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { fixtureArgs, fixtureFiles, httpEntry, startHttpFixture, stdioEntry } from './support/mcp-fixture.js';
import { startMesh, type TestMesh } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

/** An agent whose model calls `tool` once and answers with the tool message it got. */
const oneCall = (tool: string, args: unknown = {}) => ({
  agentsYaml: `
  agent: {instructions: "@agent agent", tools: [${tool}]}
`,
  script: (r: Parameters<NonNullable<Parameters<typeof startMesh>[1]['script']>>[0]) =>
    turnOf(r) === 0 ? { calls: [{ name: tool, args }] } : { final: toolMessagesOf(r)[0]?.content ?? '' },
});

const readiness = async (mesh: TestMesh) => {
  const res = await fetch(`${mesh.toolHostUrl}/readyz`);
  return { status: res.status, body: (await res.json()) as any };
};

t.test(
  'a killed stdio MCP server that stays down is reported, fails its calls within their time, and serves again once restarted',
  async (t) => {
    const files = fixtureFiles(t);
    const mesh = await startMesh(t, {
      // A call's 4 s: its wait for the restart ends when the next attempt could not be back in time.
      toolsYaml: [stdioEntry(fixtureArgs(files), ', prefix: fx_, timeoutMs: 4000')],
      ...oneCall('fx_whoami'),
    });
    const before = files.pid();
    t.equal((await mesh.invoke('agent', { prompt: 'go' })).json.output, `pid ${before}`);

    fs.writeFileSync(files.hold, ''); // its restarts fail until the file is gone
    process.kill(before, 'SIGKILL');
    const down = await waitUntil(
      async () => {
        const r = await readiness(mesh);
        return r.status === 503 ? r.body : undefined;
      },
      30_000,
      () => 'the tool-host to report the server down',
    );
    t.equal(down.error.code, 'unavailable');
    t.match(down.error.details, [
      { path: 'tools[0]', message: /^MCP server "fixture" \(tools\[0\]\) is down since \S+ \(restarting\)$/ },
    ]);
    t.match(
      (await mesh.invoke('agent', { prompt: 'go' })).json.output,
      /^Tool fx_whoami execute failed: MCP server "fixture" \(tools\[0\]\) is unavailable: it is being restarted and is not back within the call's time \(its last restart failed: .+\)\.$/,
      'a call while it stays down fails with the reason, before its timeout',
    );

    fs.rmSync(files.hold);
    await waitUntil(
      async () => (await readiness(mesh)).status === 200,
      60_000,
      () => 'the server to be restarted',
    );
    const after = files.pid();
    t.not(after, before, 'a new process');
    t.equal(
      (await mesh.invoke('agent', { prompt: 'go' })).json.output,
      `pid ${after}`,
      'the next call is served',
    );
    t.strictSame(files.lines(), ['call whoami', 'call whoami'], 'the call made while it was down never ran');
  },
);

t.test(
  'a call that comes while its stdio MCP server is being restarted waits for it, then runs',
  async (t) => {
    const files = fixtureFiles(t);
    const mesh = await startMesh(t, {
      toolsYaml: [stdioEntry(fixtureArgs(files), ', prefix: fx_')],
      ...oneCall('fx_whoami'),
    });
    const before = files.pid();
    fs.writeFileSync(files.hold, ''); // its restarts fail until the file is gone
    process.kill(before, 'SIGKILL');
    await waitUntil(
      async () => (await readiness(mesh)).status === 503,
      30_000,
      () => 'the tool-host to report the server down',
    );
    const started = await mesh.invoke('agent', { prompt: 'go' }, 'wait=0');
    await waitUntil(
      async () => mesh.model.of('agent').length >= 1,
      30_000,
      () => 'the model to ask for the tool',
    );
    await new Promise((r) => setTimeout(r, 500)); // the call reaches the tool-host, which is restarting it
    fs.rmSync(files.hold);
    const done = await mesh.waitForStatus(started.json.id, 'succeeded', 60_000);
    const after = files.pid();
    t.not(after, before, 'a new process');
    t.equal(done.output, `pid ${after}`, 'the call ran on the restarted server');
    t.strictSame(files.lines(), ['call whoami'], 'once');
  },
);

t.test('a call in flight when its stdio MCP server dies is in doubt and is not run again', async (t) => {
  const files = fixtureFiles(t);
  const mesh = await startMesh(t, {
    toolsYaml: [stdioEntry(fixtureArgs(files), ', prefix: fx_')],
    ...oneCall('fx_wait', { tag: 'w1' }),
  });
  const started = await mesh.invoke('agent', { prompt: 'go' }, 'wait=0');
  await waitUntil(
    async () => files.lines().includes('call wait w1'),
    30_000,
    () => 'the MCP tool to start',
  );
  process.kill(files.pid(), 'SIGKILL');
  const done = await mesh.waitForStatus(started.json.id, 'succeeded');
  t.equal(
    done.output,
    'Tool fx_wait execute failed: The call may or may not have taken effect: MCP server "fixture" (tools[0]) went away while it ran.',
  );
  await waitUntil(
    async () => (await readiness(mesh)).status === 200,
    60_000,
    () => 'the server to be restarted',
  );
  t.strictSame(files.lines(), ['call wait w1'], 'the tool ran once');
});

t.test('a stopped Streamable HTTP MCP server is reported and reconnected once it is back', async (t) => {
  const port = await freePort();
  let fixture = await startHttpFixture(t, port);
  const mesh = await startMesh(t, {
    toolsYaml: [httpEntry(port, ', prefix: web_')],
    ...oneCall('web_whoami'),
  });
  const before = fixture.proc.pid;
  t.equal((await mesh.invoke('agent', { prompt: 'go' })).json.output, `pid ${before}`);

  await fixture.stop();
  t.equal(
    (await mesh.invoke('agent', { prompt: 'go' })).json.output,
    'Tool web_whoami execute failed: MCP server "fixture" (tools[0]) is unavailable: reconnecting.',
    'a call while it is gone fails with the reason',
  );
  const down = await waitUntil(
    async () => {
      const r = await readiness(mesh);
      return r.status === 503 ? r.body : undefined;
    },
    30_000,
    () => 'the tool-host to report the server down',
  );
  t.match(down.error.details, [
    { path: 'tools[0]', message: /^MCP server "fixture" \(tools\[0\]\) is down since \S+ \(reconnecting\)$/ },
  ]);

  fixture = await startHttpFixture(t, port);
  await waitUntil(
    async () => (await readiness(mesh)).status === 200,
    60_000,
    () => 'the server to be reconnected',
  );
  t.equal(
    (await mesh.invoke('agent', { prompt: 'go' })).json.output,
    `pid ${fixture.proc.pid}`,
    'the next call is served by the new server',
  );
});
