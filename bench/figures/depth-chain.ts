import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { spread } from '../support/spread.js';
import { timeRuns } from '../support/time-runs.js';

/**
 * A chain l0 → l1 → … → l<depth> on ONE runner with RUNNER_CONCURRENCY=1 (each parent parks and
 * frees the slot), at model latency 0: ms per level for each client, the leaf's answer checked at
 * the top. The chain is deeper than the shipped MESH_MAX_DEPTH (8), so this runner (the one that
 * checks it) gets the depth it needs.
 */
export async function depthChainFigure(ctx: BenchContext): Promise<Figure[]> {
  const { depth } = ctx.opts;
  await ctx.mesh.setRunners(1, { RUNNER_CONCURRENCY: '1', MESH_MAX_DEPTH: String(depth + 2) });
  await ctx.model.setLatency(0);
  const chain = (invoke: (agent: string) => Promise<string>) => async () => {
    const output = await invoke('l0');
    if (output !== 'leaf') throw new Error(`the depth-${depth} chain did not reach its leaf: ${output}`);
  };
  for (const client of ctx.clients)
    await timeRuns(chain(client.invoke), Math.max(3, Math.ceil(ctx.opts.warmup / 40))); // the fresh runner's warm-up
  const runs = Math.max(3, Math.floor(ctx.opts.runs / 20));
  const perLevel = new Map(ctx.clients.map((c) => [c.name, [] as number[]]));
  for (let rep = 0; rep < ctx.opts.reps; rep++)
    for (const client of ctx.clients)
      perLevel
        .get(client.name)!
        .push(...(await timeRuns(chain(client.invoke), runs)).map((ms) => ms / depth));
  return ctx.clients.map(({ name: client }) => {
    const s = spread(perLevel.get(client)!);
    return figure('depth_chain_per_level', 'ms', s, {
      target: '≤ 5 ms per level over model latency',
      ok: s.p50 <= 5,
      extra: { depth, latencyMs: 0, client, runners: 1, concurrency: 1, modelCalls: 2 * depth + 1 },
    });
  });
}
