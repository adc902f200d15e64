// The tool-host's internal token: with MESH_INTERNAL_TOKEN set, every route but /healthz demands it.
import t from 'tap';
import { buildToolHost, loadToolDefinitions } from '../src/index.js';

const tools = loadToolDefinitions([
  { name: 'ping', description: 'Answers pong.', input: { type: 'object' }, run: () => 'pong' },
]);
const app = buildToolHost({ tools, internalToken: 's3cret-token' });
t.teardown(() => app.close());
const body = {
  args: {},
  context: {
    invocationId: 'inv_0123456789abcdef0123456789abcdef',
    callId: 't0-call0',
    agent: 'a',
    deadline: '2030-01-01T00:00:00.000Z',
    idempotencyKey: 'k',
  },
};
const unauthorized = { error: { code: 'unauthorized', message: 'A valid internal token is required.' } };

t.test('a call without the internal token answers 401 unauthorized', async (t) => {
  const res = await app.inject({ method: 'POST', url: '/tools/ping/invoke', payload: body });
  t.equal(res.statusCode, 401);
  t.strictSame(res.json(), unauthorized);
  const list = await app.inject({ method: 'GET', url: '/tools' });
  t.equal(list.statusCode, 401);
  t.strictSame(list.json(), unauthorized);
});

t.test('a wrong token, or the right one without Bearer, answers 401 unauthorized', async (t) => {
  for (const authorization of [
    'Bearer wrong',
    'Bearer s3cret-toke',
    's3cret-token',
    'Bearer s3cret-token2',
  ]) {
    const res = await app.inject({
      method: 'POST',
      url: '/tools/ping/invoke',
      headers: { authorization },
      payload: body,
    });
    t.equal(res.statusCode, 401, authorization);
    t.strictSame(res.json(), unauthorized);
  }
});

t.test('the right token is let through', async (t) => {
  const res = await app.inject({
    method: 'POST',
    url: '/tools/ping/invoke',
    headers: { authorization: 'Bearer s3cret-token' },
    payload: body,
  });
  t.equal(res.statusCode, 200);
  t.strictSame(res.json(), { result: 'pong' });
});

t.test('/healthz needs no token', async (t) => {
  const res = await app.inject({ method: 'GET', url: '/healthz' });
  t.equal(res.statusCode, 200);
  t.strictSame(res.json(), { status: 'ok' });
});

t.test('without a token configured no Authorization is needed', async (t) => {
  const open = buildToolHost({ tools });
  t.teardown(() => open.close());
  const res = await open.inject({ method: 'POST', url: '/tools/ping/invoke', payload: body });
  t.equal(res.statusCode, 200);
});
