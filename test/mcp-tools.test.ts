// MCP servers mounted in the tool-host (docs/guides/mcp.md): the fixture server (the SDK's McpServer) over
// stdio and over Streamable HTTP, its tools called by a model through a whole mesh like native ones.
import { keyLayout, type ToolInfo } from '@agentmesh/shared';
import t from 'tap';
import { toolMessagesOf, turnOf } from './support/fake-model.js';
import { fixtureArgs, fixtureFiles, httpEntry, startHttpFixture, stdioEntry } from './support/mcp-fixture.js';
import { startMesh, type TestMesh } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

const catalogue = async (mesh: TestMesh): Promise<ToolInfo[]> =>
  JSON.parse((await mesh.client.hget(keyLayout(mesh.prefix).catalogue(), 'tools')) ?? '[]');

t.test('the tools of a stdio MCP server are called by a model through the mesh', async (t) => {
  const mesh = await startMesh(t, {
    toolsYaml: [stdioEntry([], ', prefix: fx_')],
    agentsYaml: `
  agent: {instructions: "@agent agent", tools: [fx_echo, fx_add, fx_fail]}
`,
    script: (r) =>
      turnOf(r) === 0
        ? {
            calls: [
              { name: 'fx_echo', args: { text: 'hi' } },
              { name: 'fx_add', args: { a: 2, b: 3 } },
              { name: 'fx_fail', args: { reason: 'disk full' } },
            ],
          }
        : { final: 'done' },
  });
  const res = await mesh.invoke('agent', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  const [first, second] = mesh.model.of('agent');
  t.strictSame(
    first!.tools.map((x) => x.function),
    [
      {
        name: 'fx_echo',
        description: 'Echoes the text back.',
        parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      },
      {
        name: 'fx_add',
        description: 'Adds two numbers.',
        parameters: {
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        },
      },
      {
        name: 'fx_fail',
        description: 'Always fails with the given reason.',
        parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] },
      },
    ],
    'the model sees each tool with the prefix, its description and input schema',
  );
  t.strictSame(
    toolMessagesOf(second!).map((m) => m.content),
    ['echo:\nhi', '{"sum":5}', 'Tool fx_fail execute failed: disk full'],
    'text contents joined; structuredContent as the result; isError as a failed call with its text',
  );
  const tools = await catalogue(mesh);
  t.match(
    tools.find((x) => x.name === 'fx_add'),
    { source: 'mcp', idempotent: false, output: { type: 'object', properties: { sum: { type: 'number' } } } },
    'a declared output schema is in the catalogue',
  );
  t.equal(tools.find((x) => x.name === 'fx_echo')?.idempotent, true, 'idempotentHint makes it idempotent');
});

t.test('a Streamable HTTP MCP server serves its tools, and the entry overrides idempotentHint', async (t) => {
  const port = await freePort();
  await startHttpFixture(t, port);
  const mesh = await startMesh(t, {
    toolsYaml: [httpEntry(port, ', prefix: web_, idempotent: false')],
    agentsYaml: `
  agent: {instructions: "@agent agent", tools: [web_add, web_echo]}
`,
    script: (r) =>
      turnOf(r) === 0
        ? {
            calls: [
              { name: 'web_add', args: { a: 40, b: 2 } },
              { name: 'web_echo', args: { text: 'over http' } },
            ],
          }
        : { final: 'done' },
  });
  const res = await mesh.invoke('agent', { prompt: 'go' });
  t.equal(res.json.status, 'succeeded');
  t.strictSame(
    toolMessagesOf(mesh.model.of('agent')[1]!).map((m) => m.content),
    ['{"sum":42}', 'echo:\nover http'],
  );
  const tools = await catalogue(mesh);
  t.equal(tools.find((x) => x.name === 'web_echo')?.idempotent, false, 'the entry wins over idempotentHint');
  t.strictSame(await (await fetch(`${mesh.toolHostUrl}/readyz`)).json(), { status: 'ready' });
});

t.test("the invocation's cancellation reaches the MCP server as an MCP cancellation", async (t) => {
  const files = fixtureFiles(t);
  const mesh = await startMesh(t, {
    toolsYaml: [stdioEntry(fixtureArgs(files), ', prefix: fx_')],
    agentsYaml: `
  agent: {instructions: "@agent agent", tools: [fx_wait]}
`,
    script: (r) =>
      turnOf(r) === 0 ? { calls: [{ name: 'fx_wait', args: { tag: 'c1' } }] } : { final: 'done' },
  });
  const started = await mesh.invoke('agent', { prompt: 'go' }, 'wait=0');
  await waitUntil(
    async () => files.lines().includes('call wait c1'),
    30_000,
    () => 'the MCP tool to start',
  );
  const cancelled = await mesh.request('DELETE', `/invocations/${started.json.id}`);
  t.equal(cancelled.status, 202);
  await waitUntil(
    async () => files.lines().includes('cancelled wait c1'),
    30_000,
    () => `the MCP server to see the cancellation (events: ${files.lines().join(' | ')})`,
  );
  const done = await mesh.waitForStatus(started.json.id, 'cancelled');
  t.equal(done.status, 'cancelled');
  t.strictSame(files.lines(), ['call wait c1', 'cancelled wait c1'], 'the tool ran once and was cancelled');
  t.equal(mesh.model.of('agent').length, 1, 'the model was not called again');
});
