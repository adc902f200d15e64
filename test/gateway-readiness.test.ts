// /readyz (docs/architecture/invocation-life.md, docs/reference/rest-api.md): 503 `unavailable` until the tool catalogue is published and every agent
// has a live runner; 200 once they do; 503 again when an agent's last runner leaves. Services start
// in any order: the gateway comes first here.
import { buildRunner, type Runner } from '@agentmesh/agent-runner';
import { buildGateway } from '@agentmesh/gateway';
import { keyLayout, parseConfig } from '@agentmesh/shared';
import { publishCatalogue } from '@agentmesh/tool-host';
import { Redis } from 'ioredis';
import t from 'tap';
import { startFakeModel } from './support/fake-model.js';
import { queueFastPath } from './support/mesh.js';
import { startRedis } from './support/redis-server.js';

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
