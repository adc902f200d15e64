// The tool-host's own metrics (docs/reference/metrics.md, docs/reference/bounds.md): calls counted and timed by tool and outcome on an
// open `/metrics`; a name it does not serve is `unknown`, so random names add no label value.
import { buildToolHost, loadToolDefinitions } from '@agentmesh/tool-host';
import t from 'tap';

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

const sample = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

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
  const tools = new Set([...text.matchAll(/mesh_tool_host_calls_total\{tool="([^"]*)"/g)].map((m) => m[1]));
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
