import t from 'tap';
import { buildToolHost } from '../src/app.js';
import type { McpConnection } from '../src/mcp/mcp-connection.js';

const server = (outage?: object) =>
  ({ title: 'MCP server "files" (tools[1])', outageReport: () => outage }) as unknown as McpConnection;

t.test('/readyz is ready while every MCP server is up, and open without the internal token', async (t) => {
  const app = buildToolHost({ tools: [], internalToken: 'secret', mcpServers: [server()] });
  t.teardown(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(res.statusCode, 200);
  t.strictSame(res.json(), { status: 'ready' });
});

t.test('/readyz is 503 unavailable naming each MCP server that is down', async (t) => {
  const since = '2026-01-01T00:00:00.000Z';
  const app = buildToolHost({
    tools: [],
    mcpServers: [server({ path: 'tools[1]', server: 'files', state: 'restarting', since }), server()],
  });
  t.teardown(() => app.close());
  const res = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(res.statusCode, 503);
  t.strictSame(res.json(), {
    error: {
      code: 'unavailable',
      message: `Not ready: MCP server "files" (tools[1]) is down since ${since} (restarting).`,
      details: [
        { path: 'tools[1]', message: `MCP server "files" (tools[1]) is down since ${since} (restarting)` },
      ],
    },
  });
});
