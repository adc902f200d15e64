import type { BenchContext } from '../support/bench-context.js';
import { closedLoop } from '../support/closed-loop.js';
import { type Figure, figure } from '../support/figure.js';
import { round, spread } from '../support/spread.js';
import { warmUp } from '../support/warm-up.js';

const LATENCY_MS = 50;
const CLIENTS = 100;

/** Parent + 1 delegation runs/s with 1, 2, 4 … runner processes (BENCH_RUNNERS), at 50 ms. */
export async function scalingFigures(ctx: BenchContext): Promise<Figure[]> {
  const figures: Figure[] = [];
  let base: number | undefined;
  for (const runners of ctx.opts.runnerCounts) {
    await ctx.mesh.setRunners(runners);
    await warmUp(ctx, ctx.opts.warmup, { sdk: false }); // fresh runners are cold
    await ctx.model.setLatency(LATENCY_MS);
    const rates: number[] = [];
    for (let rep = 0; rep < ctx.opts.reps; rep++)
      rates.push(
        (
          await closedLoop(
            () => ctx.invoke('parent'),
            CLIENTS,
            ctx.opts.seconds,
            () => 0,
          )
        ).runsPerSecond,
      );
    const mesh = spread(rates);
    base ??= mesh.p50 / runners;
    figures.push(
      figure(`scaling_runners_${runners}`, 'runs/s', mesh, {
        target: 'reported (near-linear until Redis or the gateway saturates, given the cores)',
        extra: {
          runners,
          runnerConcurrency: ctx.opts.runnerConcurrency,
          latencyMs: LATENCY_MS,
          clients: CLIENTS,
          perRunnerVsFirst: round(mesh.p50 / runners / base),
        },
      }),
    );
    ctx.note(`scaling: ${runners} runner(s) done`);
  }
  return figures;
}
