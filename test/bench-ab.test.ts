// bench/ab.ts's turns (docs/architecture/where-the-time-goes.md, "Comparing a change in turns"),
// run small against two meshes as processes (compiled, as the bench runs them: the full tier builds
// first), one of them with a setting of its own and an extra runner, so a change to how a side is
// started or read fails here rather than in the next A/B. What it measures is never asserted; that
// both sides ran every run, in turns, on their own settings and runners, is.
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { abTurns, abWindows, parseSideEnv, startAbSide } from '../bench/support/ab-turns.js';
import { startBenchModel } from '../bench/support/start-bench-model.js';
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

t.test('a paused client waits that long after each run before its next (bench/idle-gaps.ts)', async (t) => {
  // Sides of nothing but a clock: which client ran when, and this process's CPU.
  const starts: number[][] = [[], []];
  const ends: number[][] = [[], []];
  const sides = [0, 1].map((i) => ({
    name: `S${i}`,
    invoke: async () => {
      starts[i]!.push(performance.now());
      await new Promise((r) => setImmediate(r));
      ends[i]!.push(performance.now());
      return 'ok';
    },
    processes: (): [string, number][] => [['self', process.pid]],
    pauseMs: 15,
  }));
  const results = await abTurns(sides, 'single', 45);
  for (const [i, r] of results.entries()) {
    t.equal(r.runs, 45, `${r.name}: every run`);
    t.equal(starts[i]!.length, 45);
    // Within a block (20 runs) each run starts at least the pause after the last one ended; across
    // blocks the other side ran in between.
    const gaps = starts[i]!.slice(1).map((s, k) => s - ends[i]![k]!);
    const inBlock = gaps.filter((_, k) => (k + 1) % 20 !== 0);
    t.ok(Math.min(...inBlock) >= 14, `${r.name}: no run started within the pause of the one before`);
    t.ok(r.runsPerSecond < 1000 / 15, `${r.name}: the pauses count in its rate`);
  }
});

t.test('a steady load in turns: each side alone, read over its windows only', async (t) => {
  // Sides of nothing but a clock: when each run ended, and whether the other side had one in flight.
  const inFlight = [0, 0];
  const ended: number[][] = [[], []];
  let together = 0;
  const sides = [0, 1].map((i) => ({
    name: `S${i}`,
    invoke: async () => {
      inFlight[i]!++;
      if (inFlight[1 - i]! > 0) together++;
      await new Promise((r) => setTimeout(r, 2));
      inFlight[i]!--;
      ended[i]!.push(performance.now());
      return 'ok';
    },
    processes: (): [string, number][] => [['self', process.pid]],
  }));
  const clients = 4;
  const results = await abWindows(sides, 'single', clients, { turns: 3, windowMs: 150, rampMs: 40 });
  t.equal(together, 0, 'the sides never run at once');
  for (const [i, r] of results.entries()) {
    t.ok(r.runs > 0, `${r.name}: runs read`);
    // Each turn ends with one run in flight a client, which ends after its window: never read.
    t.ok(r.runs <= ended[i]!.length - clients * 3, `${r.name}: the runs ending after a window are not read`);
    // Every run takes 2 ms at least, and the rate is over the windows alone.
    t.ok(r.runsPerSecond <= (clients * 1000) / 2, `${r.name}: its rate is over its windows`);
    t.ok(r.cpuPerRunByProcessMs.self! >= 0, `${r.name}: its CPU read over its windows`);
  }
  // Three rounds, the first side of each alternating: S0 S1 | S1 S0 | S0 S1, so the runs' ends, in
  // order, come from S0, then S1, S0 and S1 again.
  const all = [0, 1].flatMap((i) => ended[i]!.map((at) => ({ at, side: `S${i}` })));
  const order = all.sort((a, b) => a.at - b.at).map((e) => e.side);
  t.strictSame(
    order.filter((side, k) => k === 0 || side !== order[k - 1]),
    ['S0', 'S1', 'S0', 'S1'],
    'each side runs alone in its turns, the first of each round alternating',
  );
});

t.test('a failed run ends a steady turn at once, with its error', async (t) => {
  let calls = 0;
  const side = (name: string, fails: boolean) => ({
    name,
    invoke: async () => {
      calls++;
      await new Promise((r) => setTimeout(r, 2));
      if (fails && calls > 5) throw new Error('the run failed');
      return 'ok';
    },
    processes: (): [string, number][] => [['self', process.pid]],
  });
  const started = performance.now();
  await t.rejects(
    abWindows([side('S0', true), side('S1', false)], 'single', 2, { turns: 2, windowMs: 60_000, rampMs: 10 }),
    /the run failed/,
  );
  // Not after the minute-long window: the turn ended with the failure.
  t.ok(performance.now() - started < 30_000, 'the window is not waited out');
});

t.test(
  'two meshes take turns, each on its own settings and runners, each read process by process',
  async (t) => {
    const model = await startBenchModel(1);
    const a = await startAbSide('A', model.url, { runners: 1 });
    // B: its own setting, and one more runner hosting only another agent, which takes none of the runs.
    const env = parseSideEnv('LOG_LEVEL=warn');
    const b = await startAbSide('B', model.url, { runners: 1, extraRunnerAgents: 'fan', env });
    t.equal(a.processes().length, 4, 'A: gateway, Redis, tool-host and its runner');
    t.equal(b.processes().length, 5, 'B: the same and the extra runner');
    for (const side of [a, b]) for (let i = 0; i < 10; i++) await side.invoke('single');
    const [ra, rb] = await abTurns([a, b], 'single', 50);
    for (const r of [ra!, rb!]) {
      t.equal(r.runs, 50, `${r.name}: every run`);
      t.ok(
        r.wallMs.p10 > 0 && r.wallMs.p10 <= r.wallMs.p50 && r.wallMs.p50 <= r.wallMs.p90,
        `${r.name}: timed`,
      );
      t.ok(r.cpuPerRunMs > 0, `${r.name}: its processes' CPU read`);
      const sum = Object.values(r.cpuPerRunByProcessMs).reduce((x, y) => x + y, 0);
      t.ok(Math.abs(sum - r.cpuPerRunMs) < 1e-9, `${r.name}: its processes add up to it`);
    }
    t.strictSame(Object.keys(rb!.cpuPerRunByProcessMs), [
      'gateway',
      'redis',
      'tool-host',
      'runner 1',
      'runner 2',
    ]);
    const { 'runner 1': hosting, 'runner 2': extra } = rb!.cpuPerRunByProcessMs;
    // /proc counts in 10 ms ticks: over 50 runs only the runner that took them is sure to read more.
    t.ok(hosting! > 0, "B's runner hosting `single` ran its runs");
    t.ok(hosting! > extra!, "B's extra runner, not hosting it, took none of them");
    const started = (side: typeof a) =>
      fs
        .readdirSync(side.logDir)
        .filter((f) => f.startsWith('runner'))
        .map((f) => fs.readFileSync(path.join(side.logDir, f), 'utf8'))
        .join('')
        .split('\n')
        .filter((l) => l.includes('"invocation started"')).length;
    t.equal(started(a), 60, "A's runner logged each invocation at the shipped LOG_LEVEL");
    t.equal(started(b), 0, "B's runners ran on B's setting, LOG_LEVEL=warn");

    // Clients at once: each side's runs, never more than that many in flight, and its rate read.
    const inFlight = [0, 0];
    const most = [0, 0];
    const calls = [0, 0];
    const counted = [a, b].map((side, i) => ({
      ...side,
      invoke: async (agent: string) => {
        calls[i]!++;
        most[i] = Math.max(most[i]!, ++inFlight[i]!);
        try {
          return await side.invoke(agent);
        } finally {
          inFlight[i]!--;
        }
      },
    }));
    const loaded = await abTurns(counted, 'single', 130, 3);
    for (const [i, r] of loaded.entries()) {
      t.equal(calls[i], 130, `${r.name}: every run, 3 at a time`);
      t.equal(most[i], 3, `${r.name}: 3 in flight at most, and at times`);
      t.ok(r.runsPerSecond > 0 && Number.isFinite(r.runsPerSecond), `${r.name}: its runs a second`);
    }
  },
);
