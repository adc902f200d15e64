// bench/ab.ts's turns (docs/architecture/where-the-time-goes.md, "Comparing a change in turns"), run small against two
// meshes as processes (from their sources: this tier does not build), one of them with a setting of
// its own, so a change to how a side is started or read fails here rather than in the next A/B. What
// it measures is never asserted; that both sides ran every run, in turns, on their own settings, is.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { abProcessNames, abTurns, parseSideEnv, startAbSide } from '../bench/support/ab-turns.js';
import { meshClient } from '../bench/support/mesh-client.js';
import { startBenchModel } from '../bench/support/start-bench-model.js';
import { startMeshProcesses } from '../bench/support/start-mesh-processes.js';
import { stopOnExit } from '../bench/support/stop-on-exit.js';

// Everything the tests start is stopped once, at the end (stopOnExit runs once).
t.teardown(() => stopOnExit.run());

t.test("a side's settings: K=V pairs, anything else refused", async (t) => {
  t.strictSame(parseSideEnv('LOG_LEVEL=warn, RUNNER_CONCURRENCY=64'), {
    LOG_LEVEL: 'warn',
    RUNNER_CONCURRENCY: '64',
  });
  t.strictSame(parseSideEnv(undefined), {});
  t.strictSame(parseSideEnv('A=x=y'), { A: 'x=y' });
  t.throws(() => parseSideEnv('LOG_LEVEL'), /"LOG_LEVEL" is not K=V/);
  t.throws(() => parseSideEnv('=warn'), /is not K=V/);
});

t.test('two meshes take turns, each on its own settings, each read on its own processes', async (t) => {
  const model = await startBenchModel(1);
  const a = await startMeshProcesses(model.url, 1, 1, { mode: 'tsx' });
  const b = await startMeshProcesses(model.url, 1, 1, { mode: 'tsx', env: parseSideEnv('LOG_LEVEL=warn') });
  const sides = [
    { name: 'A', invoke: meshClient(a.gatewayUrl), pids: a.pids },
    { name: 'B', invoke: meshClient(b.gatewayUrl), pids: b.pids },
  ];
  for (const side of sides) for (let i = 0; i < 10; i++) await side.invoke('single');
  const [ra, rb] = await abTurns(sides, 'single', 50);
  for (const r of [ra!, rb!]) {
    t.equal(r.runs, 50, `${r.name}: every run`);
    t.ok(
      r.wallMs.p10 > 0 && r.wallMs.p10 <= r.wallMs.p50 && r.wallMs.p50 <= r.wallMs.p90,
      `${r.name}: timed`,
    );
    t.ok(r.cpuPerRunMs > 0, `${r.name}: its processes' CPU read`);
  }
  const started = (mesh: typeof a) =>
    fs
      .readdirSync(mesh.logDir)
      .filter((f) => f.startsWith('runner'))
      .map((f) => fs.readFileSync(path.join(mesh.logDir, f), 'utf8'))
      .join('')
      .split('\n')
      .filter((l) => l.includes('"invocation started"')).length;
  t.equal(started(a), 60, "A's runner logged each invocation at the shipped LOG_LEVEL");
  t.equal(started(b), 0, "B's runner ran on B's setting, LOG_LEVEL=warn");
});

t.test("a side's runners: how many, one more hosting only some agents, each one's CPU read", async (t) => {
  const model = await startBenchModel(1);
  const side = await startAbSide('B', model.url, { mode: 'tsx', runners: 1, extraRunnerAgents: 'fan' });
  t.equal(side.pids().length, 5, 'Redis, gateway, tool-host, the runner and the extra one');
  for (let i = 0; i < 10; i++) await side.invoke('single');
  const [r] = await abTurns([side], 'single', 40);
  t.strictSame(abProcessNames(r!.cpuPerRunByProcessMs.length), [
    'redis',
    'gateway',
    'tool-host',
    'runner 1',
    'runner 2',
  ]);
  const sum = r!.cpuPerRunByProcessMs.reduce((x, y) => x + y, 0);
  t.ok(Math.abs(sum - r!.cpuPerRunMs) < 1e-9, 'the processes add up to the side');
  const [hosting, extra] = r!.cpuPerRunByProcessMs.slice(3);
  // /proc counts in 10 ms ticks: over 40 runs only the runner that took them is sure to read more.
  t.ok(hosting! > 0, 'the runner hosting `single` ran its runs');
  t.ok(hosting! > extra!, 'the extra runner, not hosting it, took none of them');
});
