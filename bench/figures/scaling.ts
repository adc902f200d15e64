import { DEFAULT_RUNNER_CONCURRENCY } from '@agentmesh/shared';
import type { BenchContext } from '../support/bench-context.js';
import { closedLoop } from '../support/closed-loop.js';
import { type Figure, figure } from '../support/figure.js';
import { rotate } from '../support/rotate.js';
import { round, spread } from '../support/spread.js';
import { warmUp } from '../support/warm-up.js';

const LATENCY_MS = 50;
const CLIENTS = 100;

/** Parent + 1 delegation runs/s with 1, 2, 4 … runner processes (BENCH_RUNNERS), at 50 ms, for each client. */
export async function scalingFigures(ctx: BenchContext): Promise<Figure[]> {
  const figures: Figure[] = [];
  const base = new Map<string, number>();
  for (const runners of ctx.opts.runnerCounts) {
    await ctx.mesh.setRunners(runners);
    await warmUp(ctx, ctx.opts.warmup, { sdk: false }); // fresh runners are cold
    await ctx.model.setLatency(LATENCY_MS);
    const rates = new Map(ctx.clients.map((c) => [c.name, [] as number[]]));
    for (let rep = 0; rep < ctx.opts.reps; rep++)
      for (const client of rotate(ctx.clients, rep))
        rates
          .get(client.name)!
          .push((await closedLoop(() => client.invoke('parent'), CLIENTS, ctx.opts.seconds)).runsPerSecond);
    for (const [client, r] of rates) {
      const mesh = spread(r);
      if (!base.has(client)) base.set(client, mesh.p50 / runners);
      figures.push(
        figure(`scaling_runners_${runners}`, 'runs/s', mesh, {
          target: 'reported (near-linear until Redis or the gateway saturates, given the cores)',
          extra: {
            runners,
            client,
            runnerConcurrency: DEFAULT_RUNNER_CONCURRENCY,
            latencyMs: LATENCY_MS,
            clients: CLIENTS,
            perRunnerVsFirst: round(mesh.p50 / runners / base.get(client)!),
          },
        }),
      );
    }
    ctx.note(`scaling: ${runners} runner(s) done`);
  }
  return figures;
}
