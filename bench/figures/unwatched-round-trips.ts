import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { inTurns, type Sample, wallTime } from '../support/in-turns.js';
import { round, spread } from '../support/spread.js';

const AGENTS = ['single', 'parent'] as const;
/** The same agent on a model entry with `stream: false` (bench-config.ts). */
const JSON_SUFFIX = '_json';

/**
 * The round trips with nobody watching, before and after the runners streamed: single and parent
 * + 1 delegation through each client, at model latency 0, their model entry streaming (the shipped
 * default: `single`, `parent`) against the same agents on an entry with `stream: false`
 * (`single_json`, `parent_json`), all series taking turns (in-turns.ts). A streamed row's ratio is
 * its p50 over the JSON row's: streaming should cost an unwatched run nothing measurable.
 */
export async function unwatchedRoundTripFigures(ctx: BenchContext): Promise<Figure[]> {
  await ctx.model.setLatency(0);
  const series = new Map<string, Sample>();
  for (const agent of AGENTS)
    for (const name of [agent, agent + JSON_SUFFIX])
      for (const c of ctx.clients)
        series.set(
          `${name}/${c.name}`,
          wallTime(() => c.invoke(name)),
        );
  const pooled = new Map([...series.keys()].map((k) => [k, [] as number[]]));
  for (let rep = 0; rep < ctx.opts.reps; rep++) {
    for (const [k, times] of await inTurns(series, ctx.opts.runs)) pooled.get(k)!.push(...times);
    ctx.note(`unwatched round trips: repetition ${rep + 1}/${ctx.opts.reps}`);
  }
  const figures: Figure[] = [];
  for (const agent of AGENTS)
    for (const { name: client } of ctx.clients) {
      const streamed = spread(pooled.get(`${agent}/${client}`)!);
      const json = spread(pooled.get(`${agent}${JSON_SUFFIX}/${client}`)!);
      const extra = { latencyMs: 0, client, samples: ctx.opts.reps * ctx.opts.runs };
      figures.push(
        figure(`unwatched_${agent}_round_trip_p50`, 'ms', streamed, {
          target: 'reported: ≈ 1.0 × the same with `stream: false`',
          extra: { ...extra, modelReply: 'stream', ratio: round(streamed.p50 / json.p50) },
        }),
        figure(`unwatched_${agent}_round_trip_p50`, 'ms', json, {
          target: 'the baseline: the model entry has `stream: false`',
          extra: { ...extra, modelReply: 'json' },
        }),
      );
    }
  return figures;
}
