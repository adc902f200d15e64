// bench/redis-time.ts's reading (docs/architecture/where-the-time-goes.md, "Where Redis's time
// goes"), run small against a mesh as processes (compiled, as the bench runs them: the full tier
// builds first), so a change to the steps it names or to how it reads Redis fails here rather than
// in the next reading. What it measures is never asserted; that every run's take, end and
// completion were read, and Redis left as found, is.
import { Redis } from 'ioredis';
import t from 'tap';
import { meshClient } from '../bench/support/mesh-client.js';
import { redisTime } from '../bench/support/redis-time.js';
import { startBenchModel } from '../bench/support/start-bench-model.js';
import { startMeshProcesses } from '../bench/support/start-mesh-processes.js';
import { stepName } from '../bench/support/step-name.mjs';
import { stopOnExit } from '../bench/support/stop-on-exit.js';

t.test('a step is named as bench/hops.ts names it: a script by its key count and first key', async (t) => {
  t.equal(stepName('HGET', 'k', 'f'), 'hget');
  t.equal(
    stepName('EVALSHA', '8', 'mesh:{inv_0193a1b2-3c4d-7e8f-9a0b-1c2d3e4f5a6b}:inv:x'),
    'evalsha 8 mesh:{*}:inv:x',
  );
  t.equal(stepName('evalsha', 11, '{mesh-q}:agent-single:wait'), 'evalsha 11 {mesh-q}:agent-single:wait');
});

t.test("each run's scripts are read from Redis's side, and its settings put back", async (t) => {
  t.teardown(() => stopOnExit.run());
  const model = await startBenchModel(1);
  const mesh = await startMeshProcesses(model.url, 1, 1);
  const invoke = meshClient(mesh.gatewayUrl);
  const redis = new Redis(mesh.redisUrl);
  t.teardown(() => redis.disconnect());
  for (let i = 0; i < 10; i++) await invoke('single');
  const before = await redis.config('GET', 'slowlog-*');

  const r = await redisTime(redis, invoke, 'single', 20, 0);
  t.equal(r.runs, 20);
  t.ok(r.cpuPerRunMs > 0 && r.commandsUsPerRun > 0, 'its CPU and command time read');
  const step = (name: string) => r.steps.find((s) => s.name === name);
  // At a threshold of 0 every command is in the log, a script's inner ones too; each run has one
  // take of its job, one end of its invocation and one completion of its job.
  for (const name of [
    'evalsha 11 {mesh-q}:agent-single:wait',
    'evalsha 14 {mesh-q}:agent-single:wait',
    'evalsha 8 mesh:{*}:inv:*',
  ])
    t.equal(step(name)?.callsPerRun, 1, `${name}: once a run`);
  t.ok(
    r.steps.every((s) => Math.abs(s.usPerRun - s.usPerCall * s.callsPerRun) <= 1e-9 * s.usPerRun),
    'per run: per call × calls per run',
  );
  t.same(
    r.steps.map((s) => s.usPerRun),
    [...r.steps.map((s) => s.usPerRun)].sort((a, b) => b - a),
    'most first',
  );
  t.notOk(step('config') ?? step('slowlog') ?? step('info'), "the reading's own commands are left out");
  t.same(await redis.config('GET', 'slowlog-*'), before, "Redis's SLOWLOG settings put back");
  t.equal(await redis.slowlog('LEN'), 0, 'and its log emptied');
});
