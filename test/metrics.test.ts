// The services' own metrics (docs/reference/metrics.md, docs/reference/bounds.md): the gateway's queue
// depths and request durations, a runner's labels under a hostile model, and the tool-host's call
// counts. Each former file's tests are one heading subtest below, with its helpers (`sample` is
// shared); every mesh, and the tool-host app, is started inside its heading and stopped at its end.
import { buildToolHost, loadToolDefinitions } from '@agentmesh/tool-host';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { addRunner, startMesh, type TestMesh } from './support/mesh.js';
import { waitUntil } from './support/wait-until.js';

/** The value of one sample, e.g. `mesh_queue_jobs{agent="a",state="waiting"}`; undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

// ---------------------------------------------------------------------------------------------------
// The gateway's own metrics (docs/reference/metrics.md): the depth of every agent's queue by BullMQ state, read on
// scrape with a short cache, and request durations labelled by route template, never the raw URL.
t.test(
  "the gateway's queue depths, read on scrape with a short cache, and its request durations by route",
  async (t) => {
    async function scrape(mesh: TestMesh): Promise<string> {
      const res = await mesh.gateway.app.inject({ method: 'GET', url: '/metrics' });
      return res.body;
    }

    const jobs = (agent: string, state: string) => `mesh_queue_jobs{agent="${agent}",state="${state}"}`;

    /** Lua script calls Redis has served: BullMQ reads job counts with one script per queue. */
    async function scriptCalls(mesh: TestMesh): Promise<number> {
      const info = await mesh.client.info('commandstats');
      let calls = 0;
      for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)) calls += Number(m[1]);
      return calls;
    }

    t.test('queue depth follows a burst of invocations with no runner, then drains to 0', async (t) => {
      const mesh = await startMesh(t, {
        runners: 0,
        // A reading serves scrapes for 100 ms (1 s by default): the polls below see the burst, and the
        // drain, without waiting out the period of the reading before.
        gateway: { queueCountsCacheMs: 100 },
        agentsYaml: `
  busy: {instructions: "@agent busy"}
  idle: {instructions: "@agent idle"}
`,
        script: () => ({ final: 'done' }),
      });
      const before = await scrape(mesh);
      for (const agent of ['busy', 'idle']) {
        for (const state of ['waiting', 'active', 'waiting-children', 'delayed']) {
          t.equal(sample(before, jobs(agent, state)), 0, `${agent} ${state} is reported, at 0`);
        }
      }

      const burst = 6;
      const ids: string[] = [];
      for (let i = 0; i < burst; i++) {
        const res = await mesh.invoke('busy', { prompt: `p${i}` }, 'wait=0');
        t.equal(res.status, 202);
        ids.push(res.json.id);
      }
      await waitUntil(
        async () => sample(await scrape(mesh), jobs('busy', 'waiting')) === burst,
        10_000,
        () => `busy waiting = ${burst}`,
      );
      t.equal(sample(await scrape(mesh), jobs('idle', 'waiting')), 0, 'another agent stays at 0');

      await addRunner(t, mesh);
      for (const id of ids) await mesh.waitForStatus(id, 'succeeded');
      await waitUntil(
        async () => {
          const text = await scrape(mesh);
          return sample(text, jobs('busy', 'waiting')) === 0 && sample(text, jobs('busy', 'active')) === 0;
        },
        10_000,
        () => 'busy waiting and active = 0',
      );
    });

    t.test('a storm of scrapes reads the queues from Redis once per cache period', async (t) => {
      const mesh = await startMesh(t, {
        runners: 0,
        // A period of 500 ms (1 s by default): the 40 scrapes, started together, all ask for the
        // counts well within it (within about 0.1 s here).
        gateway: { queueCountsCacheMs: 500 },
        agentsYaml: `
  a: {instructions: "@agent a"}
  b: {instructions: "@agent b"}
  c: {instructions: "@agent c"}
`,
      });
      await scrape(mesh); // loads BullMQ's scripts
      // Past the cache period of the warm-up scrape, so the storm itself reads once.
      await new Promise((r) => setTimeout(r, 600));
      const start = await scriptCalls(mesh);
      const storm = await Promise.all(Array.from({ length: 40 }, () => scrape(mesh)));
      const used = (await scriptCalls(mesh)) - start;
      for (const text of storm) t.equal(sample(text, jobs('c', 'waiting')), 0);
      t.ok(
        used >= 1 && used <= 3,
        `40 concurrent scrapes ran ${used} count scripts for 3 queues (one reading)`,
      );
    });

    t.test(
      'request durations are labelled by route template, and unmatched URLs add no label value',
      async (t) => {
        const mesh = await startMesh(t, {
          agentsYaml: `
  a: {instructions: "@agent a"}
`,
          script: () => ({ final: 'done' }),
        });
        const randoms = Array.from({ length: 5 }, () => Math.random().toString(36).slice(2, 12));
        for (const r of randoms) {
          t.equal((await mesh.get(`/invocations/inv_${r}`)).status, 404);
          t.equal((await mesh.get(`/no/such/${r}`)).status, 404);
          t.equal((await mesh.get(`/agents/a?x=${r}`)).status, 200);
        }
        t.equal((await mesh.request('DELETE', '/agents')).status, 405);
        t.equal((await mesh.invoke('a', { prompt: 'hi' })).status, 200);
        const text = await scrape(mesh);
        const count = (route: string, method: string, status: number) =>
          sample(
            text,
            `mesh_gateway_request_seconds_count{route="${route}",method="${method}",status="${status}"}`,
          );
        t.equal(count('/invocations/:id', 'GET', 404), 5, 'an unknown invocation is its route template');
        t.equal(count('/agents/:name', 'GET', 200), 5, 'the query string is not part of the label');
        t.equal(count('unmatched', 'GET', 404), 5, 'no route: unmatched');
        t.equal(count('unmatched', 'DELETE', 405), 1, 'a known path with another method matched no route');
        t.ok(
          text.includes(
            'mesh_gateway_request_seconds_count{route="/agents/a/invoke",method="POST",status="200"}',
          ) ||
            text.includes(
              'mesh_gateway_request_seconds_count{route="/agents/:name/invoke",method="POST",status="200"}',
            ),
          'an invoke is labelled by its route',
        );
        for (const r of randoms) t.notOk(text.includes(r), 'no label carries a raw URL');
        const routes = new Set(
          [...text.matchAll(/mesh_gateway_request_seconds_count\{route="([^"]*)"/g)].map((m) => m[1]),
        );
        for (const route of routes)
          t.ok(route === 'unmatched' || route!.startsWith('/'), `route label ${route}`);
        t.ok(routes.size <= 5, `a bounded set of route labels: ${[...routes].join(', ')}`);
      },
    );

    t.test(
      'while Redis does not answer, /metrics still answers, without queue samples rather than stale ones',
      async (t) => {
        const mesh = await startMesh(t, {
          runners: 0,
          agentsYaml: `
  a: {instructions: "@agent a"}
`,
          // A reading serves scrapes for 100 ms and waits 500 ms for Redis (1 s, 2 s by default), so a
          // scrape gives up on Redis within 0.6 s of the pause, well before it ends.
          gateway: { queueCountsCacheMs: 100, queueCountsTimeoutMs: 500 },
        });
        t.equal(sample(await scrape(mesh), jobs('a', 'waiting')), 0);
        // Redis stops answering every client for a while (the gateway's connections stay open).
        await mesh.client.call('CLIENT', 'PAUSE', '2000', 'ALL');
        const text = await waitUntil(
          async () => {
            const res = await mesh.gateway.app.inject({ method: 'GET', url: '/metrics' });
            return res.statusCode === 200 && !res.body.includes('mesh_queue_jobs{') ? res.body : undefined;
          },
          10_000,
          () => 'a scrape without queue samples',
        );
        t.match(text, /# TYPE mesh_queue_jobs gauge/, 'the metric is declared');
        t.match(text, /process_cpu_user_seconds_total/, 'the rest of the scrape is there');
        await waitUntil(
          async () => sample(await scrape(mesh), jobs('a', 'waiting')) === 0,
          15_000,
          () => 'queue samples back once Redis answers',
        );
      },
    );
  },
);

// ---------------------------------------------------------------------------------------------------
// A runner's metric labels stay bounded under a hostile model (docs/reference/bounds.md): tool and sub-agent
// names the agent does not declare are counted as `unknown`, never under the invented name.
t.test("a runner's metric labels stay bounded under a hostile model", async (t) => {
  t.test('invented tool and sub-agent names add no label value to a runner’s metrics', async (t) => {
    const invented = Array.from({ length: 6 }, () => `x${Math.random().toString(36).slice(2, 12)}`);
    const mesh = await startMesh(t, {
      tools: [{ name: 'clock', description: 'Time.', input: { type: 'object' }, run: () => 'noon' }],
      agentsYaml: `
  boss: {instructions: "@agent boss", tools: [clock], subagents: [helper]}
  helper: {instructions: "@agent helper"}
`,
      script: (r) =>
        r.agent === 'helper' || turnOf(r) > 0
          ? { final: 'done' }
          : {
              calls: [
                ...invented.slice(0, 3).map((name) => ({ name, args: {} })),
                ...invented.slice(3).map((name) => ({ name: `_subagent_${name}`, args: { prompt: 'p' } })),
                { name: 'clock', args: {} },
              ],
            },
    });
    const res = await mesh.invoke('boss', { prompt: 'go' });
    t.equal(res.json.status, 'succeeded');
    const text = await mesh.runners[0]!.metrics.registry.metrics();
    for (const name of invented) t.notOk(text.includes(name), `no label carries ${name}`);
    t.match(text, /mesh_tool_calls_total\{agent="boss",tool="clock",outcome="succeeded"\} 1/);
    t.match(text, /mesh_tool_calls_total\{agent="boss",tool="unknown",outcome="failed"\} 3/);
    const labels = new Set([...text.matchAll(/(?:tool|subagent)="([^"]*)"/g)].map((m) => m[1]));
    for (const label of labels) t.ok(label === 'clock' || label === 'unknown', `label ${label} is declared`);
  });
});

// ---------------------------------------------------------------------------------------------------
// The tool-host's own metrics (docs/reference/metrics.md, docs/reference/bounds.md): calls counted and timed by tool and outcome on an
// open `/metrics`; a name it does not serve is `unknown`, so random names add no label value.
t.test(
  "the tool-host's calls, counted and timed by tool and outcome; unknown names are `unknown`",
  async (t) => {
    const tools = loadToolDefinitions([
      { name: 'ping', description: 'Answers pong.', input: { type: 'object' }, run: () => 'pong' },
      {
        name: 'boom',
        description: 'Always fails.',
        input: { type: 'object' },
        run: () => {
          throw new Error('kaput');
        },
      },
      {
        name: 'typed',
        description: 'Needs a number.',
        input: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
        run: () => 'ok',
      },
    ]);
    const token = 'metrics-test-token';
    const app = buildToolHost({ tools, internalToken: token });
    t.teardown(() => app.close());

    let calls = 0;
    const call = (tool: string, args: unknown = {}) =>
      app.inject({
        method: 'POST',
        url: `/tools/${encodeURIComponent(tool)}/invoke`,
        headers: { authorization: `Bearer ${token}` },
        payload: {
          args,
          context: {
            invocationId: 'inv_0123456789abcdef0123456789abcdef',
            callId: `t0-call${calls++}`,
            agent: 'a',
            deadline: '2030-01-01T00:00:00.000Z',
            idempotencyKey: `k${calls}`,
          },
        },
      });

    t.test('calls are counted and timed by tool and outcome, and unknown names are `unknown`', async (t) => {
      for (let i = 0; i < 3; i++) t.equal((await call('ping')).statusCode, 200);
      for (let i = 0; i < 2; i++) t.equal((await call('boom')).json().error.code, 'tool_failed');
      t.equal((await call('typed', { n: 'x' })).statusCode, 400);
      const randoms = Array.from({ length: 20 }, () => `tool_${Math.random().toString(36).slice(2, 12)}`);
      for (const name of randoms) t.equal((await call(name)).statusCode, 404);

      const res = await app.inject({ method: 'GET', url: '/metrics' });
      t.equal(res.statusCode, 200, '/metrics is open: no token needed');
      t.match(res.headers['content-type'], /text\/plain/);
      const text = res.body;
      const count = (tool: string, outcome: string) =>
        sample(text, `mesh_tool_host_calls_total{tool="${tool}",outcome="${outcome}"}`);
      t.equal(count('ping', 'succeeded'), 3);
      t.equal(count('boom', 'tool_failed'), 2);
      t.equal(count('typed', 'invalid_input'), 1);
      t.equal(count('unknown', 'tool_not_found'), randoms.length, 'every unknown name under one label');
      t.equal(
        sample(text, 'mesh_tool_host_call_seconds_count{tool="ping",outcome="succeeded"}'),
        3,
        'durations too',
      );
      for (const name of randoms) t.notOk(text.includes(name), 'no label carries an unknown name');
      const tools = new Set(
        [...text.matchAll(/mesh_tool_host_calls_total\{tool="([^"]*)"/g)].map((m) => m[1]),
      );
      t.strictSame([...tools].sort(), ['boom', 'ping', 'typed', 'unknown']);
    });

    t.test('a request outside the tool calls is not counted as one', async (t) => {
      const total = async () => {
        const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
        return [...text.matchAll(/^mesh_tool_host_calls_total\{[^}]*\} (\d+)$/gm)].reduce(
          (n, m) => n + Number(m[1]),
          0,
        );
      };
      const before = await total();
      t.ok(before > 0);
      await app.inject({ method: 'GET', url: '/tools', headers: { authorization: `Bearer ${token}` } });
      await app.inject({ method: 'GET', url: '/healthz' });
      await app.inject({
        method: 'GET',
        url: '/tools/ping/invoke',
        headers: { authorization: `Bearer ${token}` },
      });
      t.equal(await total(), before);
    });
  },
);
