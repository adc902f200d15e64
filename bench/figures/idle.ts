import { setTimeout as sleep } from 'node:timers/promises';
import type { BenchContext } from '../support/bench-context.js';
import { cpuTimeMs } from '../support/cpu-time-ms.js';
import { type Figure, figure } from '../support/figure.js';
import { round } from '../support/spread.js';

/**
 * What the mesh costs with nothing to do: each process's CPU per second (gateway, Redis, tool-host,
 * each runner) while no run is in flight, after `settleMs` without one, over `windowMs` (10 s; 2 s
 * quick). The bench reads it first, right after its warm-up, on the mesh as shipped. Its timers (heartbeats, BullMQ's stalled checks, the gone-runner lease, the event-loop
 * delay's sampling) and the collector run on. /proc counts in 10 ms ticks: a process's reading is
 * good to ±1 tick over the window.
 */
export async function idleFigures(ctx: BenchContext): Promise<Figure[]> {
  return [await idleFigure(ctx.mesh.processes(), { windowMs: ctx.opts.quick ? 2000 : 10_000 })];
}

/** The idle figure of `processes` (name, pid): see idleFigures. */
export async function idleFigure(
  processes: [string, number][],
  { settleMs = 2000, windowMs = 10_000 } = {},
): Promise<Figure> {
  await sleep(settleMs);
  const before = processes.map(([, pid]) => cpuTimeMs(pid));
  const t0 = performance.now();
  await sleep(windowMs);
  const seconds = (performance.now() - t0) / 1000;
  const perSecond = processes.map(([, pid], i) => (cpuTimeMs(pid) - before[i]!) / seconds);
  const total = round(perSecond.reduce((a, b) => a + b, 0));
  const byProcess = Object.fromEntries(processes.map(([name], i) => [name, round(perSecond[i]!)]));
  return figure(
    'idle_cpu_per_second',
    'ms/s',
    { p10: total, p50: total, p90: total },
    {
      target: 'reported: CPU of the idle mesh, every process (docs/reference/benchmarks.md)',
      extra: { byProcess, windowMs },
    },
  );
}
