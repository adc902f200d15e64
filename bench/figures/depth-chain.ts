import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { spread } from '../support/spread.js';
import { timeRuns } from '../support/time-runs.js';

/**
 * A chain l0 → l1 → … → l<depth> on ONE runner with RUNNER_CONCURRENCY=1 (each parent parks and
 * frees the slot), at model latency 0: ms per level, the leaf's answer checked at the top.
 */
export async function depthChainFigure(ctx: BenchContext): Promise<Figure[]> {
  const { depth } = ctx.opts;
  await ctx.mesh.setRunners(1, { RUNNER_CONCURRENCY: '1' });
  await ctx.model.setLatency(0);
  const chain = async () => {
    const output = await ctx.invoke('l0');
    if (output !== 'leaf') throw new Error(`the depth-${depth} chain did not reach its leaf: ${output}`);
  };
  await timeRuns(chain, Math.max(3, Math.ceil(ctx.opts.warmup / 20))); // the fresh runner's warm-up
  const runs = Math.max(3, Math.floor(ctx.opts.runs / 20));
  const perLevel: number[] = [];
  for (let rep = 0; rep < ctx.opts.reps; rep++)
    perLevel.push(...(await timeRuns(chain, runs)).map((ms) => ms / depth));
  return [
    figure('depth_chain_per_level', 'ms', spread(perLevel), {
      target: '≤ 5 ms per level over model latency',
      ok: spread(perLevel).p50 <= 5,
      extra: { depth, latencyMs: 0, runners: 1, concurrency: 1, modelCalls: 2 * depth + 1 },
    }),
  ];
}
