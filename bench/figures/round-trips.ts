import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { spread } from '../support/spread.js';
import { timeRuns } from '../support/time-runs.js';

/**
 * Single agent round trip (mesh: through the gateway; SDK: `run()`) and delegation overhead
 * (parent + 1 delegation minus single, per repetition), at model latency 0, sides interleaved.
 */
export async function roundTripFigures(ctx: BenchContext): Promise<Figure[]> {
  const { reps, runs } = ctx.opts;
  await ctx.model.setLatency(0);
  const single = { mesh: [] as number[], sdk: [] as number[] };
  const overhead = { mesh: [] as number[], sdk: [] as number[] };
  for (let rep = 0; rep < reps; rep++) {
    for (const side of ['mesh', 'sdk'] as const) {
      const run = side === 'mesh' ? ctx.invoke : ctx.sdk;
      const s = await timeRuns(() => run('single'), runs);
      const p = await timeRuns(() => run('parent'), runs);
      single[side].push(...s);
      overhead[side].push(spread(p).p50 - spread(s).p50);
    }
    ctx.note(`round trips: repetition ${rep + 1}/${reps}`);
  }
  return [
    figure('single_round_trip_p50', 'ms', spread(single.mesh), {
      sdk: spread(single.sdk),
      maxRatio: 2.5,
      target: '≤ 2.5 × SDK run()',
      extra: { latencyMs: 0, samples: single.mesh.length },
    }),
    figure('delegation_overhead_p50', 'ms', spread(overhead.mesh), {
      sdk: spread(overhead.sdk),
      maxRatio: 1.5,
      target: '≤ 1.5 × SDK',
      extra: { latencyMs: 0, repetitions: reps, runsPerRepetition: runs },
    }),
  ];
}
