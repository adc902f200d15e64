// ToolClient: what a tool call's failure tells the model. The tool's own words pass (docs/reference/callables-and-results.md);
// the runner's (an unreachable tool-host's address, ECONNREFUSED) go to the log only (issue 7, defect 8).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolContext } from '@agentmesh/shared';
import { freePort } from '@agentmesh/test-support/redis-server';
import t from 'tap';
import { ToolClient } from '../src/loop/tools/tool-client.js';

const context = (ms: number): ToolContext => ({
  invocationId: 'inv_1',
  callId: 't0-call0',
  agent: 'boss',
  deadline: new Date(Date.now() + ms).toISOString(),
  idempotencyKey: 'inv_1/t0-call0',
});
const opts = { signal: new AbortController().signal, timeoutMs: 5000 };

t.test('an unreachable tool-host fails the call without its address reaching the model', async (t) => {
  const port = await freePort();
  const client = new ToolClient(`http://127.0.0.1:${port}`, undefined);
  const outcome = await client.invoke('clock', {}, context(500), opts);
  t.strictSame(outcome.ok ? undefined : outcome.error, {
    code: 'tool_failed',
    message: 'the tool-host could not be reached',
  });
  t.match(outcome.ok ? '' : outcome.detail, `127.0.0.1:${port}`, 'the log gets the address and the cause');
});

t.test("a tool's own failure message, as the tool-host returns it, reaches the model as is", async (t) => {
  const server = http.createServer((_req, res) => {
    res.writeHead(502, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'tool_failed', message: 'disk full' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const client = new ToolClient(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, undefined);
  const outcome = await client.invoke('clock', {}, context(5000), opts);
  t.strictSame(outcome, { ok: false, error: { code: 'tool_failed', message: 'disk full' } });
});
