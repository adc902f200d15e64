// `npm run tool-host` refuses to start on an MCP server whose tools cannot be served (docs/guides/mcp.md):
// a name with the reserved prefix, or a stdio server that cannot be started, naming server and tool.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MCP_FIXTURE, stdioEntry } from '@agentmesh/test-support/mcp-fixture';
import { startService } from '@agentmesh/test-support/mesh';
import { freePort } from '@agentmesh/test-support/redis-server';
import t, { type Test } from 'tap';

async function startWith(t: Test, entry: string) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-tool-host-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'mesh.yaml');
  fs.writeFileSync(config, `models: {}\ntools: [${entry}]\nagents: {}\n`);
  const svc = startService(t, 'tool-host', {
    MESH_CONFIG: config,
    REDIS_URL: `redis://127.0.0.1:${await freePort()}`,
    TOOL_HOST_PORT: '0',
  });
  const code = await svc.exited;
  return { config, code, output: svc.output() };
}

t.test(
  'an MCP tool named with the reserved prefix stops the tool-host, naming server and tool',
  async (t) => {
    const { config, code, output } = await startWith(t, stdioEntry(['--reserved']));
    t.not(code, 0, 'the process exits with a failure code');
    t.not(code, null, 'the process exits by itself');
    t.match(
      output,
      `${config}: tools[0]: Tool name _subagent_evil must not start with the reserved prefix '_subagent_' (advertised by MCP server "fixture").`,
    );
    t.notMatch(output, /^\s+at /m, 'no stack trace');
  },
);

t.test(
  'a prefix that makes a name break the name rule stops the tool-host, naming server and tool',
  async (t) => {
    const { config, code, output } = await startWith(t, stdioEntry([], ', prefix: "fx."'));
    t.not(code, 0);
    t.match(
      output,
      `${config}: tools[0]: Tool name "fx.echo" (advertised by MCP server "fixture" as echo) must match ^[a-zA-Z0-9_-]{1,54}$.`,
    );
  },
);

t.test('a stdio MCP server that cannot be started stops the tool-host with the command', async (t) => {
  const missing = path.join(path.dirname(MCP_FIXTURE), 'no-such-server');
  const { config, code, output } = await startWith(t, `{mcp: {command: '${missing}'}}`);
  t.not(code, 0);
  t.match(output, `${config}: tools[0]: cannot start MCP server ${missing}: spawn ${missing} ENOENT`);
});
