// MESH_API_KEYS (docs/reference/rest-api.md, Auth): every route but /healthz, /readyz and /metrics
// demands a bearer key; a scoped key sees and uses only its agents. What a key may do with the
// invocations it started, which needs them to run, is test/gateway-edge.test.ts.
import { parseApiKeys } from '@agentmesh/shared';
import t from 'tap';
import { buildGateway } from '../src/index.js';
import { startGateway } from './support/gateway.js';

const alpha = { authorization: 'Bearer alpha-key-1' };
const scoped = { authorization: 'Bearer scoped-key-3' };

const mesh = await startGateway(t, {
  gateway: { apiKeys: 'alpha-key-1, beta-key-2, scoped-key-3=echo' },
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
  t.equal(await mesh.queued('echo'), 0, 'nothing was queued');
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
  for (const url of ['/healthz', '/metrics', '/docs', '/docs/static/swagger-initializer.js']) {
    const res = await mesh.app.inject({ method: 'GET', url });
    t.equal(res.statusCode, 200, url);
  }
  // No runner here: /readyz answers its own 503, not 401 (test/gateway-edge.test.ts sees its 200).
  const ready = await mesh.app.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 503, '/readyz');
  t.equal(ready.json().error.code, 'unavailable');
  t.match(ready.json().error.message, /no live runner hosts agent echo/);
  const init = await mesh.app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
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
  const ok = await mesh.invoke('echo', { prompt: 'x' }, 'wait=0', scoped);
  t.equal(ok.status, 202, 'its own agent is accepted (test/gateway-edge.test.ts runs it)');
  t.equal(await mesh.queued('planner'), 0, 'planner was never queued');
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
