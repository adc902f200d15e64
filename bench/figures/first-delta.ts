import type { BenchContext } from '../support/bench-context.js';
import { SHORT_REPLY_CHUNKS } from '../support/bench-script.js';
import { type Figure, figure } from '../support/figure.js';
import { inTurns, type Sample } from '../support/in-turns.js';
import type { ClientName } from '../support/mesh-client.js';
import { percentile } from '../support/percentile.js';
import { round, type Spread, spread } from '../support/spread.js';

/**
 * How the fake model streams the reply (bench-script.ts): its 100 pieces 1 ms apart, as a model
 * writes tokens (`tokens`), and all in one write (`burst`), where the first delta can come no
 * sooner than the whole reply.
 */
const CADENCES = [
  { agent: 'tokens', chunkMs: 1 },
  { agent: 'burst', chunkMs: 0 },
] as const;
/** Streamed runs of each side before any is timed: warm-up.ts ran neither side's streaming path. */
const WARM_RUNS = 300;

/** A figure's single value as a spread (all three the same). */
const one = (x: number): Spread => ({ p10: round(x), p50: round(x), p90: round(x) });

/**
 * Time to the first delta, at model latency 0: `POST /agents/{name}/invoke?stream=true` until the
 * first `delta` event, through each client, against the SDK's `run(agent, input, {stream: true})`
 * until its first `output_text_delta`, the same reply streamed by the same fake model to both;
 * `runs` samples per side, the sides taking turns (in-turns.ts). Median (with p10–p90) and p99.
 */
export async function firstDeltaFigures(ctx: BenchContext): Promise<Figure[]> {
  await ctx.model.setLatency(0);
  for (let i = 0; i < Math.min(ctx.opts.warmup, WARM_RUNS); i++) {
    for (const c of ctx.clients) await c.stream('burst');
    await ctx.sdkStream('burst');
  }
  const figures: Figure[] = [];
  for (const { agent, chunkMs } of CADENCES) {
    const firstDelta = (times: { firstDeltaMs: number }) => {
      if (!Number.isFinite(times.firstDeltaMs)) throw new Error(`${agent}: the run streamed no text delta`);
      return times.firstDeltaMs;
    };
    const series = new Map<ClientName | 'sdk', Sample>([
      ...ctx.clients.map((c) => [c.name, async () => firstDelta(await c.stream(agent))] as const),
      ['sdk', async () => firstDelta(await ctx.sdkStream(agent))],
    ]);
    const samples = await inTurns(series, ctx.opts.runs);
    const sdk = samples.get('sdk')!;
    for (const { name: client } of ctx.clients) {
      const mesh = samples.get(client)!;
      const extra = { latencyMs: 0, chunkMs, chunks: SHORT_REPLY_CHUNKS, client, samples: mesh.length };
      figures.push(
        figure('first_delta_p50', 'ms', spread(mesh), {
          sdk: spread(sdk),
          maxRatio: 2.5,
          target: "≤ 2.5 × the SDK's first text delta",
          extra,
        }),
        figure('first_delta_p99', 'ms', one(percentile(mesh, 0.99)), {
          sdk: one(percentile(sdk, 0.99)),
          target: 'reported: the 99th percentile of the same samples',
          extra,
        }),
      );
    }
    ctx.note(`first delta: ${agent} done`);
  }
  return figures;
}
