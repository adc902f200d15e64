// bench/hops.ts's tracer and timeline (docs/architecture/where-the-time-goes.md, "Where a single
// run's time goes"), run small against the services as processes (compiled, as the bench runs them:
// the full tier builds first), so a change to what it reads — Node's HTTP and undici channels,
// ioredis's command tracing channel, the services' entry files it names roles by — fails here
// rather than in the next traced run. What it measures is never asserted; that every hop of a run
// came, in the order a run takes them, is.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { idleFigure } from '../bench/figures/idle.js';
import { startBarePipeline } from '../bench/support/bare-pipeline.js';
import { cpuTimeMs } from '../bench/support/cpu-time-ms.js';
import { ANSWER, hopTimeline, parseHopLines, SEND } from '../bench/support/hop-timeline.js';
import { meshClient } from '../bench/support/mesh-client.js';
import { startBenchModel } from '../bench/support/start-bench-model.js';
import { startMeshProcesses } from '../bench/support/start-mesh-processes.js';
import { stopOnExit } from '../bench/support/stop-on-exit.js';
import { bareProcesses, meshProcesses, traceHops } from '../bench/support/trace-hops.js';

t.test('the timeline: medians per step from each run’s send, spilled events left out', async (t) => {
  const lines = (role: string, rows: [number, string][]) =>
    parseHopLines(role, rows.map(([us, e]) => `${us} ${e}`).join('\n'));
  const events = [
    ...lines('client', [
      [0, SEND],
      [900, ANSWER],
      [1000, SEND],
      [2100, ANSWER],
      [3000, SEND],
      [4000, ANSWER],
      [5000, SEND], // no answer: not read
    ]),
    ...lines('gateway', [
      [100, 'http in'],
      [1150, 'http in'],
      [3100, 'http in'],
    ]),
    // Twice in each run, and once (a completion spilled from the run before) in the third only.
    ...lines('runner', [
      [300, 'redis> bzpopmin'],
      [500, 'redis> bzpopmin'],
      [1300, 'redis> bzpopmin'],
      [1600, 'redis> bzpopmin'],
      [3050, 'redis< evalsha 14 {q}:wait'],
      [3400, 'redis> bzpopmin'],
      [3500, 'redis> bzpopmin'],
    ]),
  ];
  const steps = hopTimeline(events).map((s) => [s.role, s.event, s.nth, s.atMs, s.runs]);
  t.strictSame(steps, [
    ['client', SEND, 0, 0, 3],
    ['gateway', 'http in', 0, 0.1, 3],
    ['runner', 'redis> bzpopmin', 0, 0.3, 3],
    ['runner', 'redis> bzpopmin', 1, 0.5, 3],
    ['client', ANSWER, 0, 1, 3],
  ]);
  t.strictSame(
    hopTimeline(events, { skip: 2 }).map((s) => [s.event, s.atMs, s.gapMs]),
    [
      [SEND, 0, 0],
      ['redis< evalsha 14 {q}:wait', 0.05, 0.05],
      ['http in', 0.1, 0.05],
      ['redis> bzpopmin', 0.4, 0.3],
      ['redis> bzpopmin', 0.5, 0.1],
      [ANSWER, 1, 0.5],
    ],
    'the first runs skipped; what happened in every run read is a step',
  );
});

t.test('a traced mesh and its bare floor: every process notes its hops between two signals', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hops-test-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  process.env.HOP_TRACE_DIR = dir;
  const preload = path.resolve(import.meta.dirname, '../bench/support/hop-trace.mjs');
  process.env.NODE_OPTIONS = `--import ${preload}`;
  t.teardown(() => {
    delete process.env.NODE_OPTIONS;
    delete process.env.HOP_TRACE_DIR;
  });
  t.teardown(() => stopOnExit.run());
  const model = await startBenchModel(1);
  const mesh = await startMeshProcesses(model.url, 1, 1);
  const bare = await startBarePipeline(mesh.redisUrl, model.url);
  t.teardown(() => bare.stop());
  delete process.env.NODE_OPTIONS; // the processes have it; nothing else this file starts needs it
  const invoke = meshClient(mesh.gatewayUrl, 'undici');
  for (let i = 0; i < 20; i++) await invoke('single');
  const report = await traceHops(meshProcesses(mesh, model.pid), () => invoke('single'), 'single', 30);
  const hops = report.steps.map((s) => `${s.role}: ${s.event}`);
  const order = [
    'client: send',
    'client: request sent',
    'gateway: http in',
    'runner: redis< bzpopmin',
    'runner: request sent',
    'model: http in',
    'runner: response end',
    // Not the gateway's `http out`: it fires once the write is done, at times after the client read it.
    'client: answer',
  ];
  const at = order.map((h) => hops.indexOf(h));
  t.ok(
    at.every((i, k) => i >= 0 && (k === 0 || i > at[k - 1]!)),
    `a run's hops, in order: ${order.join(' → ')} (seen: ${hops.join(' | ')})`,
  );
  t.ok(
    hops.some((h) => /^gateway: redis> evalsha \d+ \{mesh-q\}:agent-single:wait$/.test(h)),
    "the gateway's add, named by its queue",
  );
  t.strictSame(Object.keys(report.cpuPerRunMs), [
    'client',
    'model',
    'gateway',
    'redis',
    'tool-host',
    'runner 1',
  ]);
  t.ok(report.cpuPerRunMs['runner 1']! > 0, 'the runner spent CPU on the runs');
  t.ok(report.wallMs.p50 > 0 && report.tracedWallMs.p50 > 0, 'both series timed');

  // The same hops with none of the mesh's work: the bare gateway and runner trace as those roles.
  for (let i = 0; i < 20; i++) await bare.invoke();
  const floor = await traceHops(bareProcesses(bare, model.pid, mesh.redisPid), bare.invoke, 'bare', 30);
  const bareHops = floor.steps.map((s) => `${s.role}: ${s.event}`);
  const bareAt = order.map((h) => bareHops.indexOf(h));
  t.ok(
    bareAt.every((i, k) => i >= 0 && (k === 0 || i > bareAt[k - 1]!)),
    `the bare run's hops, in the same order (seen: ${bareHops.join(' | ')})`,
  );

  // A bare delegation: the parent's step, the child's, the parent's again, each taken from the queue.
  t.equal(await bare.invoke('parent'), 'done', "the bare parent answers with its model's final answer");
  const delegated = await traceHops(
    bareProcesses(bare, model.pid, mesh.redisPid),
    () => bare.invoke('parent'),
    'bare-parent',
    30,
  );
  const count = (role: string, event: string) =>
    delegated.steps.filter((s) => s.role === role && s.event === event).length;
  t.equal(count('model', 'http in'), 3, 'the model is asked thrice: the parent, the child, the parent');
  t.ok(
    count('runner', 'redis< bzpopmin') >= 2,
    'the child and the parent resumed, each taken from the queue',
  );

  // A bare fan (the siblings' floor): its 8 children side by side, then the parent with their answers.
  await model.startTrace();
  t.equal(await bare.invoke('fan'), 'done', "the bare fan answers with its model's final answer");
  const asked = (await model.stopTrace()).map((a) => a.agent);
  t.strictSame(
    [asked.filter((a) => a === 'fan').length, asked.filter((a) => a === 'child').length],
    [2, 8],
    'the model is asked by the fan, its 8 children, and the fan again',
  );
  t.equal(asked.at(-1), 'fan', 'the fan asks last, once every child has answered');
});

t.test('the floor with two bare runners, and the idle mesh: each process is read apart', async (t) => {
  t.teardown(() => stopOnExit.run());
  const model = await startBenchModel(1);
  const mesh = await startMeshProcesses(model.url, 1, 2);
  const bare = await startBarePipeline(mesh.redisUrl, model.url, { runners: 2, prefix: 'bench-bare-test' });
  t.teardown(() => bare.stop());
  t.equal(bare.runnerPids.length, 2, 'two bare runners');
  t.equal(await bare.invoke('parent'), 'done', 'a delegation across two bare runners completes');
  // Sequential runs go to the runner that has waited longest: both take their turns.
  const before = bare.runnerPids.map(cpuTimeMs);
  for (let i = 0; i < 200; i++) await bare.invoke();
  const used = bare.runnerPids.map((pid, i) => cpuTimeMs(pid) - before[i]!);
  t.ok(
    used.every((ms) => ms > 0),
    `both bare runners took runs (CPU ms over 200 runs: ${used.join(', ')})`,
  );

  const idle = await idleFigure(mesh.processes(), { settleMs: 200, windowMs: 1000 });
  t.equal(idle.figure, 'idle_cpu_per_second');
  const byProcess = idle.byProcess as Record<string, number>;
  t.strictSame(Object.keys(byProcess), ['gateway', 'redis', 'tool-host', 'runner 1', 'runner 2']);
  t.ok(
    Object.values(byProcess).every((v) => Number.isFinite(v) && v >= 0),
    `every process read (${JSON.stringify(byProcess)})`,
  );
  const sum = Object.values(byProcess).reduce((a, b) => a + b, 0);
  t.ok(Math.abs(idle.mesh.p50 - sum) < 0.5, 'the figure is their sum');
});
