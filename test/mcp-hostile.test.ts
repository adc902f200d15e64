// MCP servers that page their tool list without end (issue 24, item 5): one paging forever grew the
// tool-host to 2.7 GB in 36 s and it never listened. The tool-host reads at most MAX_TOOL_PAGES
// pages and MESH_MCP_MAX_TOOLS tools per server, stops at a repeated cursor, and fails its start
// naming the server; a server within the bounds mounts as before.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseConfig } from '@agentmesh/shared';
import { mountMcpServers } from '@agentmesh/tool-host';
import t from 'tap';
import { startService } from './support/mesh.js';

const PAGER = path.resolve(import.meta.dirname, 'fixtures/mcp/paging-server.mjs');
const entry = (mode: string, extra = '') =>
  `{mcp: ${JSON.stringify({ command: process.execPath, args: [PAGER, mode] })}${extra}}`;
const configFile = (...entries: string[]) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mesh-mcp-pager-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'mesh.yaml');
  fs.writeFileSync(file, `models: {}\ntools: [${entries.join(', ')}]\nagents: {}\n`);
  return file;
};

t.test('a tool-host whose MCP servers page without end fails its start, naming each server', async (t) => {
  const file = configFile(entry('forever'), entry('repeat'), entry('many'));
  // No Redis is reached: the start fails while mounting the servers.
  const host = startService(t, 'tool-host', { MESH_CONFIG: file, REDIS_URL: 'redis://127.0.0.1:1' });
  t.equal(await host.exited, 1);
  const out = host.output();
  const named = (mode: string) => `MCP server ${process.execPath} ${PAGER} ${mode}`;
  t.match(out, `tools[0]: ${named('forever')}: it lists more than 1000 tools (MESH_MCP_MAX_TOOLS)`);
  t.match(out, `tools[1]: ${named('repeat')}: tools/list gave the cursor "same" twice`);
  t.match(out, `tools[2]: ${named('many')}: it lists more than 1000 tools (MESH_MCP_MAX_TOOLS)`);
});

t.test('pages past MAX_TOOL_PAGES end the list even when each page is small', async (t) => {
  const file = configFile(entry('forever'));
  const config = parseConfig(fs.readFileSync(file, 'utf8'), file, {}, 'yaml');
  const silent = { info() {}, warn() {}, error() {}, debug() {} };
  const failed = await mountMcpServers(config, [], silent, undefined, 1_000_000).then(
    () => undefined,
    (e: Error) => e,
  );
  t.match(failed?.message, 'tools/list goes on past 100 pages');
});

t.test('within the bounds, every page is read: MESH_MCP_MAX_TOOLS raises the limit', async (t) => {
  const file = configFile(entry('few'), entry('many', ', prefix: m_'));
  const config = parseConfig(fs.readFileSync(file, 'utf8'), file, {}, 'yaml');
  const silent = { info() {}, warn() {}, error() {}, debug() {} };
  const mounted = await mountMcpServers(config, [], silent, undefined, 2000);
  t.teardown(() => Promise.all(mounted.servers.map((s) => s.close())));
  t.equal(mounted.tools.length, 6 + 2000);
  t.same(
    mounted.tools.slice(0, 6).map((x) => x.info.name),
    ['t0_0', 't0_1', 't0_2', 't1_0', 't1_1', 't1_2'],
  );
});
