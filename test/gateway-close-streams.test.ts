// Closing a gateway ends its open tree streams first (docs/guides/streaming.md): an open
// events?deltas=true stream of a long invocation must not hold gateway.close() until it ends.
import t from 'tap';
import { Agent, fetch as undiciFetch } from 'undici';
import { listenGateway, startMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

const mesh = await startMesh(t, {
  agentsYaml: `
  slow: {instructions: "@agent slow"}
`,
  script: () => ({ final: 'late', latencyMs: 120_000 }),
});

t.test('closing the gateway ends an open delta stream instead of waiting for it', async (t) => {
  const { gateway, base } = await listenGateway(t, mesh, {});
  const started = await fetch(`${base}/agents/slow/invoke?wait=0`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: 'take your time' }),
  });
  const { id } = (await started.json()) as { id: string };
  t.teardown(() => mesh.request('DELETE', `/invocations/${id}`));
  const res = await fetch(`${base}/invocations/${id}/events?deltas=true`);
  t.equal(res.status, 200);
  const reader = res.body!.getReader();
  await reader.read(); // the stream is open
  await gateway.close();
  for (let r = await reader.read().catch(() => ({ done: true })); !r.done; )
    r = await reader.read().catch(() => ({ done: true }));
  const view = await mesh.get(`/invocations/${id}`);
  t.equal((view.json as { status: string }).status, 'running', 'closed while the invocation still runs');
});

t.test(
  'closing the gateway does not wait on the keep-alives of the streams it ends: events, invoke, chat, A2A, MCP',
  async (t) => {
    const { gateway, base } = await listenGateway(t, mesh, {});
    // Clients that keep an idle connection a minute (undici's default is 4 s; the gateway offers 72 s):
    // a close that waited on the connections its streams leave idle would take that long.
    const agent = new Agent({ keepAliveTimeout: 60_000, keepAliveMaxTimeout: 60_000 });
    t.teardown(() => agent.close());
    const keepFetch = ((url: string | URL, init?: RequestInit) =>
      undiciFetch(url, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
    t.teardown(async () => {
      const running = (await mesh.get('/invocations?agent=slow&limit=100')).json.items as {
        id: string;
        status: string;
      }[];
      for (const { id } of running) await mesh.request('DELETE', `/invocations/${id}`);
    });
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      keepFetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      });
    const before = mesh.model.requests.length;
    const started = await post('/agents/slow/invoke?wait=0', { prompt: 'take your time' });
    const { id } = (await started.json()) as { id: string };
    const opened = {
      events: keepFetch(`${base}/invocations/${id}/events?deltas=true`),
      invoke: post('/agents/slow/invoke?stream=true', { prompt: 'stream it' }),
      chat: post('/v1/chat/completions', {
        model: 'slow',
        stream: true,
        messages: [{ role: 'user', content: 'chat' }],
      }),
      a2a: post(
        '/a2a/slow',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'SendStreamingMessage',
          params: {
            message: { messageId: 'close-test', role: 'ROLE_USER', parts: [{ text: 'a2a' }] },
          },
        },
        { 'a2a-version': '1.0' },
      ),
      mcp: post(
        '/mcp',
        {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'slow', arguments: { prompt: 'mcp' }, _meta: { progressToken: 1 } },
        },
        { accept: 'application/json, text/event-stream' },
      ),
    };
    // Each answer is open and read to its end, as a client does.
    const ends: Promise<string>[] = [];
    for (const [kind, pending] of Object.entries(opened)) {
      const res = await pending;
      t.equal(res.status, 200, `${kind}: open`);
      t.match(res.headers.get('content-type'), 'text/event-stream', `${kind}: streaming`);
      const reader = res.body!.getReader();
      ends.push(
        (async () => {
          while (!(await reader.read()).done);
          return kind;
        })(),
      );
    }
    // All five invocations run (their model calls are in flight), each answer waiting on its own.
    await waitUntil(
      async () => mesh.model.requests.length === before + 5,
      10_000,
      () => 'the five model calls',
    );
    const began = Date.now();
    const closed = await Promise.race([
      gateway.close().then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), 10_000).unref()),
    ]);
    t.ok(closed, `closed in ${Date.now() - began} ms, well within the clients' keep-alive`);
    t.strictSame((await Promise.all(ends)).sort(), Object.keys(opened).sort(), 'every answer ended');
  },
);
