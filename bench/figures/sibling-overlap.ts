import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { round, spread } from '../support/spread.js';
import { timeRuns } from '../support/time-runs.js';

const LATENCY_MS = 50;
/** Parent turn, the 8 children side by side, parent's last turn. */
const IDEAL_MS = 3 * LATENCY_MS;

/** Wall time of a parent delegating to 8 children at once, at model latency 50 ms. */
export async function siblingOverlapFigure(ctx: BenchContext): Promise<Figure[]> {
  const runs = Math.max(5, Math.floor(ctx.opts.runs / 10));
  await ctx.model.setLatency(LATENCY_MS);
  const wall = { mesh: [] as number[], sdk: [] as number[] };
  for (let rep = 0; rep < ctx.opts.reps; rep++) {
    wall.mesh.push(...(await timeRuns(() => ctx.invoke('fan'), runs)));
    wall.sdk.push(...(await timeRuns(() => ctx.sdk('fan'), runs)));
  }
  const mesh = spread(wall.mesh);
  const sdk = spread(wall.sdk);
  const ratioToIdeal = round(mesh.p50 / IDEAL_MS);
  return [
    figure('overlap_8_siblings_wall', 'ms', mesh, {
      sdk,
      target: '≤ 1.0 × SDK and ≤ 1.2 × ideal',
      ok: mesh.p50 <= sdk.p50 && ratioToIdeal <= 1.2,
      extra: { latencyMs: LATENCY_MS, ideal: IDEAL_MS, ratioToIdeal, samples: wall.mesh.length },
    }),
  ];
}
