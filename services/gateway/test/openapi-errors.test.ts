// Errors name what is wrong (issue 9): a property the schema forbids at its own path, the known
// agents (those the caller may use) for an unknown one, 405 with `Allow` for a wrong method on every
// documented path.
import t from 'tap';
import { openapiMesh } from '../../../test/fixtures/openapi-client/openapi-mesh.js';
import { buildGateway } from '../src/index.js';
import { startGateway } from './support/gateway.js';

// The OpenAPI tests' mesh, without runners (test/openapi-errors.test.ts streams its runs).
const mesh = await startGateway(t, { agentsYaml: openapiMesh.agentsYaml, tools: openapiMesh.tools ?? [] });
await mesh.app.listen({ port: 0, host: '127.0.0.1' });
const base = `http://127.0.0.1:${(mesh.app.server.address() as { port: number }).port}`;

t.test('a property the schema forbids is named in the message and at its own path', async (t) => {
  const res = await mesh.invoke('quiz', { question: 'What is 2 + 2?', questoin: 'typo' });
  t.equal(res.status, 400);
  t.strictSame(res.json, {
    error: {
      code: 'invalid_input',
      message: 'Invalid body: body/questoin: is not an allowed property',
      details: [{ path: '/questoin', message: 'is not an allowed property' }],
    },
  });
  const echo = await mesh.invoke('echo', { prompt: 'hi', question: 'x' });
  t.strictSame(echo.json.error.details, [{ path: '/question', message: 'is not an allowed property' }]);
});

t.test('an unknown agent lists the agents the caller may use', async (t) => {
  const open = await mesh.invoke('eccho', { prompt: 'hi' });
  t.equal(open.status, 404);
  t.strictSame(open.json, {
    error: { code: 'agent_not_found', message: 'No agent is named eccho (agents: echo, quiz, lead, slow).' },
  });
  const secured = await buildGateway({
    config: mesh.config,
    redisUrl: mesh.redis.url,
    prefix: mesh.prefix,
    defaultTimeoutSeconds: 60,
    retentionSeconds: 3600,
    apiKeys: 'all-key,echo-key=echo|quiz',
  });
  t.teardown(() => secured.close());
  const ask = async (key: string, url: string) =>
    (await secured.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${key}` } })).json();
  t.equal(
    (await ask('echo-key', '/agents/eccho')).error.message,
    'No agent is named eccho (agents: echo, quiz).',
    'a scoped key is told only its own agents',
  );
  const invoke = await secured.app.inject({
    method: 'POST',
    url: '/agents/nobody/invoke',
    headers: { authorization: 'Bearer echo-key' },
    payload: { prompt: 'hi' },
  });
  t.equal(invoke.json().error.message, 'No agent is named nobody (agents: echo, quiz).');
});

t.test('every documented path answers another method with 405 and the methods it allows', async (t) => {
  const doc = (await (await fetch(`${base}/docs/json`)).json()) as { paths: Record<string, object> };
  const concrete = (p: string) =>
    p
      .replace('{id}', 'inv_00000000000000000000000000000000')
      .replace('{callId}', 't0-c0')
      .replace('{name}', 'echo')
      .replace('{agent}', 'echo')
      .replace('{model}', 'echo');
  for (const [p, ops] of Object.entries(doc.paths)) {
    const documented = Object.keys(ops).map((m) => m.toUpperCase());
    const allowed = [...documented, ...(documented.includes('GET') ? ['HEAD'] : [])].sort();
    const method = documented.includes('PUT') ? 'PATCH' : 'PUT';
    const res = await fetch(`${base}${concrete(p)}`, { method });
    t.equal(res.status, 405, `${method} ${p}`);
    t.equal(res.headers.get('allow'), allowed.join(', '), `${p} allows ${allowed.join(', ')}`);
    const body = (await res.json()) as { error: { code: string; message: string } };
    t.equal(body.error.code, 'method_not_allowed');
    t.equal(
      body.error.message,
      `${method} is not allowed on ${concrete(p)}; it answers ${allowed.join(', ')}.`,
    );
  }
  const nowhere = await fetch(`${base}/nowhere`, { method: 'PUT' });
  t.equal(nowhere.status, 404, 'an unknown path is still 404 not_found');
});
