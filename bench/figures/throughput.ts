import type { BenchContext } from '../support/bench-context.js';
import { closedLoop } from '../support/closed-loop.js';
import { type Figure, figure } from '../support/figure.js';
import { round, spread } from '../support/spread.js';

/**
 * Parent + 1 delegation runs/s with `clients` closed-loop clients at `latencyMs`, and the CPU each
 * run costs: every mesh process and Redis (/proc) against the SDK's own process (cpuUsage).
 */
export async function throughputFigures(
  ctx: BenchContext,
  latencyMs: number,
  clients: number,
): Promise<Figure[]> {
  await ctx.model.setLatency(latencyMs);
  const rate = { mesh: [] as number[], sdk: [] as number[] };
  const cpu = { mesh: [] as number[], sdk: [] as number[] };
  const parts = { redis: 0, gateway: 0, toolHost: 0, runners: 0 };
  let meshRuns = 0;
  for (let rep = 0; rep < ctx.opts.reps; rep++) {
    const before = ctx.meshCpuByPart();
    const mesh = await closedLoop(() => ctx.invoke('parent'), clients, ctx.opts.seconds, ctx.meshCpuMs);
    const after = ctx.meshCpuByPart();
    for (const k of Object.keys(parts) as (keyof typeof parts)[]) parts[k] += after[k] - before[k];
    meshRuns += mesh.runs;
    const sdk = await closedLoop(() => ctx.sdk('parent'), clients, ctx.opts.seconds, ctx.sdkCpuMs);
    rate.mesh.push(mesh.runsPerSecond);
    rate.sdk.push(sdk.runsPerSecond);
    cpu.mesh.push(mesh.cpuMsPerRun);
    cpu.sdk.push(sdk.cpuMsPerRun);
    ctx.note(`throughput ${latencyMs} ms × ${clients}: repetition ${rep + 1}/${ctx.opts.reps}`);
  }
  const extra = {
    latencyMs,
    clients,
    runners: ctx.mesh.runners.length,
    runnerConcurrency: ctx.opts.runnerConcurrency,
    seconds: ctx.opts.seconds,
  };
  return [
    figure(`throughput_latency${latencyMs}_clients${clients}`, 'runs/s', spread(rate.mesh), {
      sdk: spread(rate.sdk),
      minRatio: 1,
      target: '≥ 1.0 × SDK',
      extra,
    }),
    figure(`cpu_per_run_latency${latencyMs}`, 'ms', spread(cpu.mesh), {
      sdk: spread(cpu.sdk),
      maxRatio: 1.5,
      target: '≤ 1.5 × SDK',
      extra: {
        ...extra,
        counted: 'gateway + runners + tool-host + redis-server vs the SDK process',
        meshByPart: Object.fromEntries(Object.entries(parts).map(([k, ms]) => [k, round(ms / meshRuns)])),
      },
    }),
  ];
}
