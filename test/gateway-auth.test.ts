// MESH_API_KEYS (DESIGN §3, Auth): every route but /healthz, /readyz and /metrics demands a bearer
// key; a scoped key sees and uses only its agents; an invocation is visible and cancellable only
// with the key that started it, children included.
import { createHash } from 'node:crypto';
import { buildGateway } from '@agentmesh/gateway';
import { keyLayout, parseApiKeys } from '@agentmesh/shared';
import t from 'tap';
import { turnOf } from './support/fake-model.js';
import { startMesh } from './support/mesh.js';

const alpha = { authorization: 'Bearer alpha-key-1' };
const beta = { authorization: 'Bearer beta-key-2' };
const scoped = { authorization: 'Bearer scoped-key-3' };

const mesh = await startMesh(t, {
  apiKeys: 'alpha-key-1, beta-key-2, scoped-key-3=echo',
  headers: alpha,
  agentsYaml: `
  planner:
    description: Plans.
    instructions: "@agent planner"
    subagents: [echo]
  echo:
    description: Echoes.
    instructions: "@agent echo"
  slow:
    instructions: "@agent slow"
`,
  script: (r) => {
    if (r.agent === 'planner')
      return turnOf(r) === 0
        ? { calls: [{ name: '_subagent_echo', args: { prompt: 'hi' } }] }
        : { final: 'planned' };
    return { final: `${r.agent} says hi`, latencyMs: r.agent === 'slow' ? 1500 : 0 };
  },
});

const id0 = 'inv_00000000000000000000000000000000';
const guarded: [method: 'GET' | 'POST' | 'DELETE', url: string][] = [
  ['GET', '/agents'],
  ['GET', '/agents/echo'],
  ['POST', '/agents/echo/invoke'],
  ['POST', '/agents/ghost/invoke'],
  ['GET', '/invocations'],
  ['GET', `/invocations/${id0}`],
  ['DELETE', `/invocations/${id0}`],
  ['GET', '/docs/json'],
  ['GET', '/docs/yaml'],
  ['GET', '/no/such/route'],
];

t.test('every route but /healthz, /readyz and /metrics answers 401 unauthorized without a key', async (t) => {
  for (const [method, url] of guarded) {
    const res = await mesh.request(method, url, {
      payload: method === 'POST' ? { prompt: 'x' } : undefined,
      headers: {},
    });
    t.equal(res.status, 401, `${method} ${url}`);
    t.strictSame(res.json, {
      error: { code: 'unauthorized', message: 'Send an API key as Authorization: Bearer <key>.' },
    });
    t.equal(res.headers['www-authenticate'], 'Bearer realm="agentmesh"');
  }
  t.equal(mesh.model.requests.length, 0, 'nothing ran');
});

t.test('a wrong key, or a right key without the Bearer scheme, answers 401 unauthorized', async (t) => {
  for (const authorization of [
    'Bearer wrong',
    'Bearer alpha-key-',
    'Bearer alpha-key-11',
    'alpha-key-1',
    'Basic alpha-key-1',
    'Bearer',
    'Bearer scoped-key-3=echo',
  ]) {
    const res = await mesh.get('/agents', { authorization });
    t.equal(res.status, 401, authorization);
    t.equal(res.json.error.code, 'unauthorized');
  }
  const wrong = await mesh.request('GET', '/agents', { headers: { authorization: 'Bearer wrong' } });
  t.equal(wrong.headers['www-authenticate'], 'Bearer realm="agentmesh", error="invalid_token"');
  t.equal(wrong.json.error.message, 'The API key is not valid.');
  t.equal(
    (await mesh.get('/agents', { authorization: 'bearer  alpha-key-1' })).status,
    200,
    'the scheme is case-insensitive',
  );
});

t.test('/healthz, /readyz, /metrics and the Swagger UI page need no key', async (t) => {
  for (const url of ['/healthz', '/readyz', '/metrics', '/docs', '/docs/static/swagger-initializer.js']) {
    const res = await mesh.gateway.app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 200, url);
  }
  const init = await mesh.gateway.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
  t.match(init.body, /requestInterceptor/, 'the UI asks for a key and sends it');
  t.doesNotThrow(() => new Function(init.body), 'the initializer is valid JavaScript');
});

t.test('GET /agents lists only the agents of the key scope', async (t) => {
  const all = await mesh.get('/agents');
  t.strictSame(all.json.agents.map((a: { name: string }) => a.name).sort(), ['echo', 'planner', 'slow']);
  const some = await mesh.get('/agents', scoped);
  t.strictSame(
    some.json.agents.map((a: { name: string }) => a.name),
    ['echo'],
  );
});

t.test('a scoped key gets 403 forbidden for any other agent, before its body is read', async (t) => {
  const forbidden = { error: { code: 'forbidden', message: 'This API key may not use agent planner.' } };
  const described = await mesh.get('/agents/planner', scoped);
  t.equal(described.status, 403);
  t.strictSame(described.json, forbidden);
  const invoked = await mesh.invoke('planner', { prompt: 'x' }, 'wait=0', scoped);
  t.equal(invoked.status, 403);
  t.strictSame(invoked.json, forbidden);
  t.equal((await mesh.invoke('planner', { nope: 1 }, 'wait=0', scoped)).status, 403, 'even with a bad body');
  t.equal((await mesh.invoke('ghost', { prompt: 'x' }, 'wait=0', scoped)).json.error.code, 'agent_not_found');
  t.equal((await mesh.get('/agents/echo', scoped)).status, 200);
  const ok = await mesh.invoke('echo', { prompt: 'x' }, 'wait=30', scoped);
  t.equal(ok.status, 200);
  t.equal(ok.json.output, 'echo says hi');
  t.notOk(mesh.model.of('planner').length, 'planner never ran');
});

t.test("another key's invocation and its children answer 404 for GET and DELETE", async (t) => {
  const res = await mesh.invoke('planner', { prompt: 'plan' });
  t.equal(res.status, 200);
  const { id } = res.json;
  const childId = res.json.calls.find((c: { kind: string }) => c.kind === 'subagent').childId;
  const owner = await mesh.client.hget(keyLayout(mesh.prefix).invocation(id, id), 'owner');
  t.equal(owner, createHash('sha256').update('alpha-key-1').digest('hex'), 'the owner is a hash of the key');
  for (const x of [id, childId]) {
    t.equal((await mesh.get(`/invocations/${x}`)).status, 200, 'its own key sees it');
    for (const headers of [beta, scoped]) {
      for (const method of ['GET', 'DELETE'] as const) {
        const other = await mesh.request(method, `/invocations/${x}`, { headers });
        t.equal(other.status, 404, `${method} ${x}`);
        t.strictSame(other.json, {
          error: { code: 'invocation_not_found', message: `No invocation has id ${x}.` },
        });
      }
    }
  }
});

t.test('another key cannot cancel a running invocation; its own key can', async (t) => {
  const started = await mesh.invoke('slow', { prompt: 'x' }, 'wait=0');
  t.equal(started.status, 202);
  const { id } = started.json;
  t.equal((await mesh.request('DELETE', `/invocations/${id}`, { headers: beta })).status, 404);
  t.equal((await mesh.waitForStatus(id, 'succeeded')).output, 'slow says hi', 'it ran to the end');
  const again = await mesh.invoke('slow', { prompt: 'y' }, 'wait=0');
  const cancelled = await mesh.request('DELETE', `/invocations/${again.json.id}`);
  t.equal(cancelled.status, 202);
  await mesh.waitForStatus(again.json.id, 'cancelled');
});

t.test('/docs/json declares the bearer scheme and shows a scoped key only its agents', async (t) => {
  const doc = (await mesh.get('/docs/json')).json;
  t.strictSame(doc.components.securitySchemes.bearerAuth, {
    type: 'http',
    scheme: 'bearer',
    description: 'One of the keys of MESH_API_KEYS.',
  });
  t.strictSame(doc.security, [{ bearerAuth: [] }]);
  t.strictSame(doc.paths['/healthz'].get.security, [], '/healthz is open');
  t.ok(doc.paths['/agents/planner/invoke']);
  const some = (await mesh.get('/docs/json', scoped)).json;
  t.ok(some.paths['/agents/echo/invoke']);
  t.notOk(some.paths['/agents/planner/invoke'], 'a scoped key sees only its agents');
});

t.test('a malformed MESH_API_KEYS names every bad entry by position, never by its text', async (t) => {
  t.strictSame(parseApiKeys(' k1 , k2=echo| planner ', ['echo', 'planner']), [
    { key: 'k1', agents: undefined },
    { key: 'k2', agents: ['echo', 'planner'] },
  ]);
  t.equal(parseApiKeys(undefined), undefined, 'unset: auth off');
  t.throws(
    () => parseApiKeys('secret1,,=echo,secret2=,secret3=echo|gh*st,secret1,sec ret,secret4=ghost', ['echo']),
    {
      code: 'invalid_config',
      message: [
        'Invalid environment:',
        'MESH_API_KEYS[1]: is empty (two commas in a row, or a trailing comma)',
        'MESH_API_KEYS[2]: has no key before "="',
        'MESH_API_KEYS[3]: agent 1 of its scope is empty (write key=agent1|agent2)',
        'MESH_API_KEYS[4]: agent 2 of its scope is not a valid agent name (a key may not contain "=")',
        'MESH_API_KEYS[5]: repeats the key of MESH_API_KEYS[0]',
        'MESH_API_KEYS[6]: the key may hold only visible ASCII characters, without spaces, "," or "="',
        'MESH_API_KEYS[7]: agent 1 of its scope is no agent of the config (agents: echo)',
      ].join('\n'),
    },
  );
  t.throws(() => parseApiKeys('  '), {
    message: 'Invalid environment:\nMESH_API_KEYS: is set but lists no key',
  });
  await t.rejects(
    buildGateway({
      config: mesh.config,
      redisUrl: 'redis://127.0.0.1:1',
      prefix: 'mesh',
      defaultTimeoutSeconds: 60,
      retentionSeconds: 60,
      apiKeys: 'k1=nobody',
    }),
    { code: 'invalid_config', message: /MESH_API_KEYS\[0\]: agent 1 of its scope is no agent of the config/ },
    'the gateway refuses to start',
  );
});

t.test("another API key cannot stream an invocation's events", async (t) => {
  const started = await mesh.invoke('echo', { prompt: 'go' }, 'wait=30', alpha);
  const url = `/invocations/${started.json.id}/events`;
  const asBeta = await mesh.gateway.app.inject({ method: 'GET', url, headers: beta });
  t.equal(asBeta.statusCode, 404);
  t.equal(asBeta.json().error.code, 'invocation_not_found');
  t.equal((await mesh.gateway.app.inject({ method: 'GET', url })).statusCode, 401);
  const asAlpha = await mesh.gateway.app.inject({ method: 'GET', url, headers: alpha });
  t.equal(asAlpha.statusCode, 200);
  t.match(asAlpha.body, /event: output/);
});
