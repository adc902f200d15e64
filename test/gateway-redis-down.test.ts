import net from 'node:net';
// With its Redis gone the gateway stays alive, says why it is not ready, and answers 503
// `unavailable` (retryable) rather than a 500; after a Redis restart it serves again.
import { buildGateway } from '@agentmesh/gateway';
import { keyLayout, parseConfig } from '@agentmesh/shared';
import { publishCatalogue } from '@agentmesh/tool-host';
import { Redis } from 'ioredis';
import t from 'tap';
import { startRedis } from './support/redis-server.js';

t.test('a gateway whose Redis is down answers 503 unavailable, and recovers from a restart', async (t) => {
  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const config = parseConfig(
    `models:
  default: {provider: openai, baseUrl: 'http://127.0.0.1:9/v1', apiKey: k, model: fake}
tools: []
agents:
  alpha:
    description: First.
    instructions: "@agent alpha"
`,
    '/test/mesh.yaml',
    {},
    'yaml',
  );
  const client = new Redis(redis.url, { maxRetriesPerRequest: null, lazyConnect: true });
  await client.connect();
  await publishCatalogue(client, keyLayout('mesh'), []);
  client.disconnect();
  const gateway = await buildGateway({
    config,
    redisUrl: redis.url,
    prefix: 'mesh',
    defaultTimeoutSeconds: 60,
    retentionSeconds: 3600,
  });
  t.teardown(() => gateway.close());
  await gateway.app.ready();
  const request = async (method: 'GET' | 'POST', url: string) => {
    const res = await gateway.app.inject({
      method,
      url,
      ...(method === 'POST' ? { payload: { prompt: 'hi' } } : {}),
    });
    return { status: res.statusCode, json: res.json() };
  };
  const unknownId = '/invocations/inv_0123456789abcdef0123456789abcdef';
  t.equal((await request('GET', unknownId)).status, 404);

  // A restarted Redis (connections cut, data gone) is reconnected to.
  await redis.restart();
  for (;;) {
    const res = await request('GET', unknownId);
    if (res.status === 404) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const ready = await request('GET', '/readyz');
  t.equal(
    ready.json.error.message,
    'Not ready: no live runner hosts agent alpha.',
    'only the runner is missing now',
  );
  await redis.stop();
  // Hold the port: under parallel test files another redis-server could otherwise start on it and
  // the gateway would reconnect to that one.
  const squatter = net.createServer((socket) => socket.destroy());
  await new Promise<void>((r) => squatter.listen(redis.port, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => squatter.close(() => r())));
  for (;;) {
    const res = await request('GET', '/readyz');
    if (res.json.error?.message === 'Not ready: Redis is unreachable.') break;
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal((await request('GET', '/healthz')).status, 200, 'still alive');
  const unavailable = { error: { code: 'unavailable', message: 'Redis is unreachable; try again later.' } };
  const invoke = await request('POST', '/agents/alpha/invoke');
  t.equal(invoke.status, 503);
  t.strictSame(invoke.json, unavailable);
  const read = await request('GET', unknownId);
  t.equal(read.status, 503);
  t.strictSame(read.json, unavailable);
});
