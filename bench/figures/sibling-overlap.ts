import { type BarePipeline, FLOOR_RUNNERS, withBareFloors } from '../support/bare-pipeline.js';
import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { inTurns, type Sample, wallTime } from '../support/in-turns.js';
import { monotonicMs } from '../support/model-arrivals.js';
import { round, type Spread, spread } from '../support/spread.js';

const LATENCY_MS = 50;
/** Parent turn, the 8 children side by side, parent's last turn. */
const IDEAL_MS = 3 * LATENCY_MS;

/**
 * Where a fan's time goes besides the model's three latencies, read from the fake model's side:
 * when each request arrived. `start`: the client sent → the parent's first request arrived;
 * `first_child` / `last_child`: the parent's answer was due → the first / last child's request
 * arrived; `fan_in`: the last child's answer was due → the parent's next request arrived; `end`:
 * the parent's last answer was due → the client had the result. start + last_child + fan_in + end
 * is the wall time less 3 × the latency (each "due" includes the model's timer, alike on both sides).
 */
const PHASES = ['start', 'first_child', 'last_child', 'fan_in', 'end'] as const;
type Phases = Record<(typeof PHASES)[number], number>;

/** Fans each bare pipeline runs before it is timed: its processes start cold. */
const FLOOR_WARMUP = 30;

/**
 * Wall time of a parent delegating to 8 children at once, at model latency 50 ms, for each client;
 * and its floor, the same hops with none of the mesh's work (bare-pipeline.ts: the 8 children added
 * in one write, in stock BullMQ steps), with one bare runner and with two, through each client. The
 * SDK, the mesh and the floors take turns in blocks of runs (in-turns.ts).
 */
export async function siblingOverlapFigure(ctx: BenchContext): Promise<Figure[]> {
  const runs = Math.max(5, Math.floor(ctx.opts.runs / 10));
  await ctx.model.setLatency(LATENCY_MS);
  const clients = ctx.clients.map((c) => c.name);
  const warm = async (pipeline: BarePipeline) => {
    for (let i = 0; i < Math.min(ctx.opts.warmup, FLOOR_WARMUP); i++) await pipeline.invoke('fan');
  };
  return withBareFloors(ctx.mesh.redisUrl, ctx.model.url, 'bench-bare-fan', warm, async (bare) => {
    const series = new Map<string, Sample>([
      ...ctx.clients.map((c): [string, Sample] => [c.name, wallTime(() => c.invoke('fan'))]),
      ['sdk', wallTime(() => ctx.sdk('fan'))],
      ...FLOOR_RUNNERS.flatMap((n, i) =>
        clients.map((via): [string, Sample] => [
          `bare${n}/${via}`,
          wallTime(() => bare[i]!.invoke('fan', via)),
        ]),
      ),
    ]);
    const wall = new Map([...series.keys()].map((k) => [k, [] as number[]]));
    for (let rep = 0; rep < ctx.opts.reps; rep++)
      for (const [k, samples] of await inTurns(series, runs)) wall.get(k)!.push(...samples);
    const sdk = spread(wall.get('sdk')!);
    const floors = FLOOR_RUNNERS.flatMap((runners) =>
      clients.map((client) =>
        figure('floor_bare_overlap_8_siblings_wall', 'ms', spread(wall.get(`bare${runners}/${client}`)!), {
          sdk,
          target: "reported: the fan's hops alone, in stock BullMQ steps (docs/reference/benchmarks.md)",
          extra: { latencyMs: LATENCY_MS, client, runners, samples: wall.get('sdk')!.length },
        }),
      ),
    );
    return [...floors, ...(await meshFigures(ctx, wall, sdk, runs))];
  });
}

/** The mesh's wall time against the SDK's and the ideal, and where its time goes, for each client. */
async function meshFigures(
  ctx: BenchContext,
  wall: Map<string, number[]>,
  sdk: Spread,
  runs: number,
): Promise<Figure[]> {
  // The phases in runs of their own, after the timed ones: noting arrivals costs an IPC round trip.
  const phases = new Map(ctx.clients.map((c) => [c.name, [] as Phases[]]));
  const sdkPhases: Phases[] = [];
  for (let i = 0; i < runs; i++) {
    for (const client of ctx.clients)
      phases.get(client.name)!.push(await phasesOf(ctx, () => client.invoke('fan')));
    sdkPhases.push(await phasesOf(ctx, () => ctx.sdk('fan')));
  }
  return ctx.clients.flatMap(({ name: client }) => {
    const mesh = spread(wall.get(client)!);
    const ratioToIdeal = round(mesh.p50 / IDEAL_MS);
    return [
      figure('overlap_8_siblings_wall', 'ms', mesh, {
        sdk,
        target: '≤ 1.0 × SDK and ≤ 1.2 × ideal',
        ok: mesh.p50 <= sdk.p50 && ratioToIdeal <= 1.2,
        extra: {
          latencyMs: LATENCY_MS,
          client,
          ideal: IDEAL_MS,
          ratioToIdeal,
          samples: wall.get('sdk')!.length,
        },
      }),
      ...PHASES.map((p) =>
        figure(`overlap_8_siblings_${p}`, 'ms', spread(phases.get(client)!.map((x) => x[p])), {
          sdk: spread(sdkPhases.map((x) => x[p])),
          target: "reported: where the fan's time goes (from the model's side)",
          extra: { latencyMs: LATENCY_MS, client, samples: sdkPhases.length },
        }),
      ),
    ];
  });
}

/** One fan run, its phases read from when the fake model saw each request arrive. */
async function phasesOf(ctx: BenchContext, run: () => Promise<unknown>): Promise<Phases> {
  await ctx.model.startTrace();
  const sent = monotonicMs();
  await run();
  const done = monotonicMs();
  const arrivals = await ctx.model.stopTrace();
  const parent = arrivals.filter((a) => a.agent === 'fan').map((a) => a.at);
  const children = arrivals.filter((a) => a.agent === 'child').map((a) => a.at);
  const [first, next] = parent;
  if (first === undefined || next === undefined || children.length === 0)
    throw new Error(`a fan run reached the model as ${JSON.stringify(arrivals.map((a) => a.agent))}`);
  const firstChild = Math.min(...children);
  const lastChild = Math.max(...children);
  return {
    start: first - sent,
    first_child: firstChild - (first + LATENCY_MS),
    last_child: lastChild - (first + LATENCY_MS),
    fan_in: next - (lastChild + LATENCY_MS),
    end: done - (next + LATENCY_MS),
  };
}
