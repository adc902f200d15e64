// mountMcpServers in-process against the fixture MCP server (the SDK's McpServer) over stdio.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigError, parseConfig, type ToolRunContext } from '@agentmesh/shared';
import { fixtureArgs, fixtureFiles, stdioEntry } from '@agentmesh/test-support/mcp-fixture';
import { freePort } from '@agentmesh/test-support/redis-server';
import { waitUntil } from '@agentmesh/test-support/wait-until';
import t, { type Test } from 'tap';
import { MCP_TIMING } from '../src/mcp/mcp-connection.js';
import { mountMcpServers } from '../src/mcp/mount-mcp-servers.js';

const silent = { info() {}, warn() {}, error() {}, debug() {} };

function configWith(t: Test, ...entries: string[]) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-mcp-mount-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'mesh.yaml');
  return parseConfig(`models: {}\ntools: [${entries.join(', ')}]\nagents: {}\n`, file, {}, 'yaml');
}

async function problemsOf(run: Promise<unknown>) {
  const e = await run.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!(e instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(e)}`);
  return e.problems.map((p) => `${p.path}: ${p.message}`);
}

t.test(
  'the entry sets idempotent over the hint, and its timeout; the tools are served until closed',
  async (t) => {
    const files = fixtureFiles(t);
    const config = configWith(t, stdioEntry(fixtureArgs(files), ', idempotent: true, timeoutMs: 1234'));
    const mounted = await mountMcpServers(config, [], silent);
    t.teardown(() => Promise.all(mounted.servers.map((s) => s.close())));
    t.strictSame(
      mounted.tools.map((x) => [x.info.name, x.info.idempotent, x.info.timeoutMs, x.info.source]),
      [
        ['echo', true, 1234, 'mcp'],
        ['add', true, 1234, 'mcp'],
        ['fail', true, 1234, 'mcp'],
        ['whoami', true, 1234, 'mcp'],
        ['wait', true, 1234, 'mcp'],
      ],
    );
    t.notOk('$schema' in mounted.tools[0]!.info.input, "the generator's dialect URI is dropped");
    const whoami = mounted.tools.find((x) => x.info.name === 'whoami')!;
    const ctx = { signal: new AbortController().signal } as ToolRunContext;
    t.equal(await whoami.run({}, ctx), `pid ${files.pid()}`);
    const pid = files.pid();
    await mounted.servers[0]!.close();
    await waitUntil(
      async () => {
        try {
          process.kill(pid, 0);
          return false;
        } catch {
          return true;
        }
      },
      10_000,
      () => 'the stdio server to end with its connection',
    );
    await t.rejects(
      async () => whoami.run({}, ctx),
      { code: 'tool_failed' },
      'a closed server serves nothing',
    );
  },
);

t.test('a name taken by a native tool or another server is a duplicate, naming the server', async (t) => {
  const config = configWith(
    t,
    stdioEntry([]),
    stdioEntry(['--name', 'second'], ', prefix: x_'),
    stdioEntry(['--name', 'third'], ', prefix: x_'),
  );
  const problems = await problemsOf(mountMcpServers(config, ['echo'], silent));
  t.strictSame(problems, [
    'tools[0]: duplicate tool name "echo" (advertised by MCP server "fixture")',
    'tools[2]: duplicate tool name "x_echo" (advertised by MCP server "third" as echo)',
    'tools[2]: duplicate tool name "x_add" (advertised by MCP server "third" as add)',
    'tools[2]: duplicate tool name "x_fail" (advertised by MCP server "third" as fail)',
    'tools[2]: duplicate tool name "x_whoami" (advertised by MCP server "third" as whoami)',
    'tools[2]: duplicate tool name "x_wait" (advertised by MCP server "third" as wait)',
  ]);
});

t.test(
  'an HTTP server that cannot be reached within the start wait fails the start with its URL',
  async (t) => {
    const port = await freePort();
    const config = configWith(t, `{mcp: {url: 'http://127.0.0.1:${port}/mcp?token=x'}}`);
    const problems = await problemsOf(
      mountMcpServers(config, [], silent, { ...MCP_TIMING, startWaitMs: 300 }),
    );
    t.strictSame(problems, [`tools[0]: cannot reach MCP server http://127.0.0.1:${port}/mcp: fetch failed`]);
  },
);
