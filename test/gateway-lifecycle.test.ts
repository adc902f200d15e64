// A gateway's life around its requests: /readyz as the catalogue and the runners come and go, a
// shutdown that answers the requests waiting for an invocation at once, and one that ends its open
// streams rather than wait on them. Each former file's tests are one heading subtest below, with its
// own Redis and mesh, started in it and stopped at its end.
import { buildRunner, type Runner } from '@agentmesh/agent-runner';
import { buildGateway } from '@agentmesh/gateway';
import { keyLayout, parseConfig } from '@agentmesh/shared';
import { publishCatalogue } from '@agentmesh/tool-host';
import { Redis } from 'ioredis';
import t from 'tap';
import { Agent, fetch as undiciFetch } from 'undici';
import { startFakeModel } from './support/fake-model.js';
import { listenGateway, queueFastPath, startMesh } from './support/mesh.js';
import { startRedis } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

// ---------------------------------------------------------------------------------------------------
// /readyz (docs/architecture/invocation-life.md, docs/reference/rest-api.md): 503 `unavailable` until the tool catalogue is published and every agent
// has a live runner; 200 once they do; 503 again when an agent's last runner leaves. Services start
// in any order: the gateway comes first here.
t.test('/readyz follows the tool catalogue and a live runner for every agent', async (t) => {
  const silent = { info() {}, warn() {}, error() {}, debug() {} };

  t.test('readiness follows the catalogue and the runners of every agent', async (t) => {
    const redis = await startRedis();
    t.teardown(() => redis.stop());
    const model = await startFakeModel(() => ({ final: 'ready to serve' }));
    t.teardown(() => model.close());
    const config = parseConfig(
      `models:
  default: {provider: openai, baseUrl: '${model.url}', apiKey: test-key, model: fake}
tools: []
agents:
  alpha:
    description: First.
    instructions: "@agent alpha"
  beta:
    description: Second.
    instructions: "@agent beta"
`,
      '/test/mesh.yaml',
      {},
      'yaml',
    );
    const gateway = await buildGateway({
      config,
      redisUrl: redis.url,
      prefix: 'mesh',
      defaultTimeoutSeconds: 60,
      retentionSeconds: 3600,
    });
    t.teardown(() => gateway.close());
    await gateway.app.ready();
    const get = async (url: string) => {
      const res = await gateway.app.inject({ method: 'GET', url });
      return { status: res.statusCode, json: res.json() };
    };
    const readyz = async (until: (message: string | undefined) => boolean) => {
      for (;;) {
        const res = await get('/readyz');
        if (until(res.json.error?.message)) return res;
        await new Promise((r) => setTimeout(r, 25));
      }
    };

    const cold = await get('/readyz');
    t.equal(cold.status, 503);
    t.strictSame(cold.json, {
      error: {
        code: 'unavailable',
        message:
          'Not ready: no live runner hosts agent alpha; no live runner hosts agent beta; the tool catalogue has not been published yet.',
        details: [
          { path: '/', message: 'no live runner hosts agent alpha' },
          { path: '/', message: 'no live runner hosts agent beta' },
          { path: '/', message: 'the tool catalogue has not been published yet' },
        ],
      },
    });
    t.equal((await get('/healthz')).status, 200, 'alive all the same');
    const agents = await get('/agents');
    t.equal(agents.status, 503);
    t.strictSame(agents.json, {
      error: { code: 'unavailable', message: 'The tool catalogue has not been published yet.' },
    });
    const early = await gateway.app.inject({
      method: 'POST',
      url: '/agents/alpha/invoke',
      payload: { prompt: 'hi' },
    });
    t.equal(early.statusCode, 503);
    t.equal(early.json().error.code, 'unavailable');

    const client = new Redis(redis.url, { maxRetriesPerRequest: null });
    t.teardown(() => client.disconnect());
    await publishCatalogue(client, keyLayout('mesh'), []);
    const catalogued = await readyz((m) => !m?.includes('catalogue'));
    t.equal(catalogued.status, 503);
    t.equal(
      catalogued.json.error.message,
      'Not ready: no live runner hosts agent alpha; no live runner hosts agent beta.',
    );
    t.equal((await get('/agents')).status, 200, 'the agents are listed once the catalogue is there');

    const runners = new Set<Runner>();
    t.teardown(() => Promise.all([...runners].map((r) => r.close())));
    const startRunner = async (agents: string[]): Promise<Runner> => {
      const runner = await buildRunner({
        config,
        redisUrl: redis.url,
        prefix: 'mesh',
        toolHostUrl: 'http://127.0.0.1:9',
        agents,
        concurrency: 2,
        retentionSeconds: 3600,
        limits: { maxDepth: 8, maxDelegationsPerTurn: 16, maxResultBytes: 65536, maxRecoveries: 5 },
        lockDurationMs: 4000,
        queueFastPath: queueFastPath(),
        metricsPort: 0,
        log: silent,
      });
      runners.add(runner);
      return runner;
    };
    await startRunner(['alpha']);
    const half = await readyz((m) => !m?.includes('alpha'));
    t.equal(half.status, 503);
    t.equal(half.json.error.message, 'Not ready: no live runner hosts agent beta.');

    const betaRunner = await startRunner(['beta']);
    const ready = await readyz((m) => m === undefined);
    t.equal(ready.status, 200);
    t.strictSame(ready.json, { status: 'ready' });
    const served = await gateway.app.inject({
      method: 'POST',
      url: '/agents/beta/invoke',
      payload: { prompt: 'hi' },
    });
    t.equal(served.statusCode, 200);
    t.equal(served.json().output, 'ready to serve');

    runners.delete(betaRunner);
    await betaRunner.close();
    const gone = await readyz((m) => m !== undefined);
    t.equal(gone.status, 503);
    t.equal(gone.json.error.message, 'Not ready: no live runner hosts agent beta.');
  });
});

// ---------------------------------------------------------------------------------------------------
// A gateway shutting down finishes its open requests: one waiting for an invocation answers at once
// with the invocation as it stands (202 + Location) rather than holding the shutdown.
t.test('a closing gateway answers a request waiting for an invocation with 202 at once', async (t) => {
  t.test('closing the gateway answers a request that waits for an invocation with 202 at once', async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml: `
  slow: {instructions: "@agent slow"}
`,
      script: () => ({ final: 'late', latencyMs: 3000 }),
    });
    await mesh.gateway.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = mesh.gateway.app.server.address() as { port: number };
    const pending = fetch(`http://127.0.0.1:${port}/agents/slow/invoke?wait=60`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'go' }),
    });
    while (mesh.model.requests.length === 0) await new Promise((r) => setTimeout(r, 20));
    const closed = mesh.gateway.close();
    const res = await pending;
    await closed;
    t.equal(res.status, 202);
    const view = (await res.json()) as { id: string; status: string };
    t.equal(res.headers.get('location'), `/invocations/${view.id}`);
    t.equal(view.status, 'running', 'answered before the invocation finished');
    t.notOk(mesh.model.requests[0]!.doneAt, 'the model call was still in flight');
  });
});

// ---------------------------------------------------------------------------------------------------
// Closing a gateway ends its open tree streams first (docs/guides/streaming.md): an open
// events?deltas=true stream of a long invocation must not hold gateway.close() until it ends.
t.test('a closing gateway ends its open streams rather than wait on them', async (t) => {
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
});
