// A code agent's ctx.memory survives its parks (docs/architecture/durability-and-fencing.md): writes are committed with the next
// durable record and a replay sees, at every recorded call, what the first run had committed
// there — also writes made inside a ctx.step fn, which a replay skips, and on another runner.
import path from 'node:path';
import { buildRunner } from '@agentmesh/agent-runner';
import { keyLayout, loadCodeAgents } from '@agentmesh/shared';
import t from 'tap';
import { queueFastPath, startMesh } from './support/mesh.js';

const fixture = (name: string) => path.resolve(import.meta.dirname, `fixtures/code-agents/${name}.mjs`);
const agentsYaml = `  keeper: {module: '${fixture('memory-keeper')}', subagents: [researcher]}
  researcher: {description: Researches., instructions: "@agent researcher"}
`;
const expected = {
  inside: 'seeded',
  seenBeforePark: { from: 'step' },
  afterPark: { from: 'step' },
  gone: null,
  count: 1,
  child: 'child answer',
};

t.test(
  'memory written inside and before a step is read back after the invocation parks and replays',
  async (t) => {
    const mesh = await startMesh(t, {
      agentsYaml,
      script: () => ({ final: 'child answer', latencyMs: 200 }),
    });
    const res = await mesh.invoke('keeper', { prompt: 'go' });
    t.equal(res.json.status, 'succeeded', JSON.stringify(res.json.error));
    t.same(res.json.output, expected, 'count is 1: the replay does not see the state of its future');
    const id = res.json.id;
    t.same(await mesh.client.hgetall(keyLayout(mesh.prefix).memory(id, id)), {
      count: '1',
      inside: '{"from":"step"}',
    });
  },
);

t.test('memory is restored by a runner that did not write it', async (t) => {
  const mesh = await startMesh(t, {
    agentsYaml,
    script: () => ({ final: 'child answer', latencyMs: 1500 }),
    runners: 0,
  });
  const start = async () => {
    const runner = await buildRunner({
      config: mesh.config,
      codeAgents: await loadCodeAgents(mesh.config),
      redisUrl: mesh.redis.url,
      prefix: mesh.prefix,
      toolHostUrl: mesh.toolHostUrl,
      concurrency: 4,
      retentionSeconds: 3600,
      limits: { maxDepth: 8, maxDelegationsPerTurn: 16, maxResultBytes: 65536, maxRecoveries: 5 },
      lockDurationMs: 3000,
      queueFastPath: queueFastPath(),
      metricsPort: 0,
      log: { info() {}, warn() {}, error() {}, debug() {} },
    });
    let closed: Promise<void> | undefined;
    const close = () => (closed ??= runner.close());
    t.teardown(close);
    return { id: runner.id, close };
  };
  const first = await start();
  const started = await mesh.invoke('keeper', { prompt: 'go' }, 'wait=0');
  const id = started.json.id;
  await mesh.waitForStatus(id, 'waiting', 20_000);
  await first.close(); // drains: the child finishes here, the parked parent is left to the next runner
  const second = await start();
  const done = await mesh.waitForStatus(id, 'succeeded', 30_000);
  t.same(done.output, expected);
  t.equal(
    await mesh.client.hget(keyLayout(mesh.prefix).invocation(id, id), 'runner'),
    second.id,
    'the replay ran on the new runner',
  );
});
