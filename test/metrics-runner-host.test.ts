// A runner serves its metrics on HOST (docs/reference/metrics.md): in a container HOST=0.0.0.0 makes them
// scrapeable from another host; unset, they stay on loopback.
import os from 'node:os';
import { buildRunner } from '@agentmesh/agent-runner';
import t from 'tap';
import { queueFastPath, startMesh, startService } from './support/mesh.js';
import { freePort } from './support/redis-server.js';
import { waitUntil } from './support/wait-until.js';

/** An IPv4 address of this machine that is not loopback, if it has one. */
const external = Object.values(os.networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

const agentsYaml = `
  a: {instructions: "@agent a"}
`;

const get = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(2000) }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }));

t.test('with HOST=0.0.0.0 a runner process serves /metrics on every interface', async (t) => {
  const mesh = await startMesh(t, { runners: 0, agentsYaml, script: () => ({ final: 'done' }) });
  const port = await freePort();
  const runner = startService(t, 'runner', {
    ...mesh.env,
    HOST: '0.0.0.0',
    RUNNER_METRICS_PORT: String(port),
  });
  await waitUntil(
    async () => (await mesh.get('/readyz')).status === 200,
    60_000,
    () => runner.output(),
  );
  t.equal((await mesh.invoke('a', { prompt: 'go' })).json.status, 'succeeded');
  const local = await get(`http://127.0.0.1:${port}/metrics`);
  t.equal(local.status, 200);
  t.match(local.text, /mesh_invocations_total\{agent="a",status="succeeded"\} 1/);
  t.equal((await get(`http://127.0.0.1:${port}/healthz`)).status, 200, 'liveness for a healthcheck');
  t.equal((await get(`http://127.0.0.1:${port}/other`)).status, 404);
  if (!external) {
    t.comment('this machine has no non-loopback IPv4 address to scrape through: only loopback checked');
    return;
  }
  const remote = await get(`http://${external}:${port}/metrics`);
  t.equal(remote.status, 200, `scraped through ${external}`);
  t.match(remote.text, /mesh_runner_slots_in_use 0/);
});

t.test(
  'without a host the metrics stay on loopback',
  { skip: !external && 'no non-loopback address' },
  async (t) => {
    const mesh = await startMesh(t, { runners: 0, agentsYaml });
    const runner = await buildRunner({
      config: mesh.config,
      redisUrl: mesh.redis.url,
      prefix: mesh.prefix,
      toolHostUrl: mesh.toolHostUrl,
      concurrency: 1,
      retentionSeconds: 3600,
      limits: { maxDepth: 8, maxDelegationsPerTurn: 16, maxResultBytes: 65536, maxRecoveries: 5 },
      lockDurationMs: 3000,
      queueFastPath: queueFastPath(),
      metricsPort: await freePort(),
      log: { info() {}, warn() {}, error() {}, debug() {} },
    });
    t.teardown(() => runner.close());
    t.equal((await get(`http://127.0.0.1:${runner.metricsPort}/metrics`)).status, 200);
    await t.rejects(get(`http://${external}:${runner.metricsPort}/metrics`), 'not reachable from outside');
  },
);
