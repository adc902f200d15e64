import type { BenchContext } from '../support/bench-context.js';
import { LONG_REPLY_CHUNKS } from '../support/bench-script.js';
import { type Figure, figure } from '../support/figure.js';
import { rotate } from '../support/rotate.js';
import { round, spread } from '../support/spread.js';

/**
 * A 2,000-piece reply streamed 1 ms apart (`long`, bench-script.ts), at model latency 0, through
 * `POST /agents/long/invoke?stream=true`: per run, the time from the response's first byte to the
 * stream's end (right after the root's terminal status) against the model's own time to send the
 * reply (its arrival to its last piece written, read on the fake model's side); the ratio is the
 * median of the runs' own ratios. `reps` runs per client, the clients in another order each time.
 */
export async function longReplyFigures(ctx: BenchContext): Promise<Figure[]> {
  await ctx.model.setLatency(0);
  const series = () => ({ endToEnd: [] as number[], model: [] as number[], ratio: [] as number[] });
  const runs = new Map(ctx.clients.map((c) => [c.name, series()]));
  for (let rep = 0; rep < ctx.opts.reps; rep++) {
    for (const client of rotate(ctx.clients, rep)) {
      await ctx.model.startTrace();
      const times = await client.stream('long');
      const sentMs = (await ctx.model.stopTrace()).find((a) => a.agent === 'long')?.sentMs;
      if (sentMs === undefined) throw new Error('the fake model did not note the long reply');
      const endToEnd = times.endMs - times.firstByteMs;
      const r = runs.get(client.name)!;
      r.endToEnd.push(endToEnd);
      r.model.push(sentMs);
      r.ratio.push(endToEnd / sentMs);
    }
    ctx.note(`long reply: repetition ${rep + 1}/${ctx.opts.reps}`);
  }
  return ctx.clients.map(({ name: client }) => {
    const r = runs.get(client)!;
    const ratio = round(spread(r.ratio).p50);
    return figure('long_reply_end_to_end', 'ms', spread(r.endToEnd), {
      target: "≤ 1.1 × the model's own time to send it",
      ok: ratio <= 1.1,
      extra: {
        ratio,
        model: spread(r.model),
        latencyMs: 0,
        chunkMs: 1,
        chunks: LONG_REPLY_CHUNKS,
        client,
        samples: r.endToEnd.length,
      },
    });
  });
}
