import { type BarePipeline, FLOOR_RUNNERS, withBareFloors } from '../support/bare-pipeline.js';
import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { inTurns, type Sample, wallTime } from '../support/in-turns.js';
import type { ClientName } from '../support/mesh-client.js';
import { type Spread, spread } from '../support/spread.js';

type Side = ClientName | 'sdk';
const AGENTS = ['single', 'parent'] as const;

/**
 * Single agent round trip (mesh: through the gateway; SDK: `run()`) and delegation overhead
 * (parent + 1 delegation minus single, per repetition), at model latency 0, for each client of the
 * mesh; and the floors under both, the same hops with none of the mesh's work (bare-pipeline.ts), for
 * each client too: a single run's, and a delegation's in stock BullMQ steps (the bare parent less the
 * bare single, per repetition), each with one bare runner and with two, as many as the mesh ships (a
 * sequential client's runs then go to the two in turns, as they go to the mesh's). Within a
 * repetition the series (the SDK, the mesh through each client, single and parent, and the floors)
 * take turns in blocks of runs (in-turns.ts).
 */
export async function roundTripFigures(ctx: BenchContext): Promise<Figure[]> {
  await ctx.model.setLatency(0);
  const sides = new Map<Side, (agent: string) => Promise<unknown>>([
    ...ctx.clients.map((c) => [c.name, c.invoke] as const),
    ['sdk', (agent: string) => ctx.sdk(agent as 'single' | 'parent')],
  ]);
  return withBareFloors(
    ctx.mesh.redisUrl,
    ctx.model.url,
    'bench-bare',
    async (pipeline) => {
      for (let i = 0; i < ctx.opts.warmup; i++) await pipeline.invoke(i % 2 === 0 ? 'single' : 'parent');
    },
    (bare) =>
      measure(
        ctx,
        sides,
        bare.map((b) => b.invoke),
      ),
  );
}

async function measure(
  ctx: BenchContext,
  sides: Map<Side, (agent: string) => Promise<unknown>>,
  bare: BarePipeline['invoke'][],
): Promise<Figure[]> {
  const { reps, runs } = ctx.opts;
  const clients = ctx.clients.map((c) => c.name);
  const series = new Map<string, Sample>(
    FLOOR_RUNNERS.flatMap((n, i) =>
      clients.flatMap((via) =>
        AGENTS.map((agent): [string, Sample] => [
          `${agent}/bare${n}/${via}`,
          wallTime(() => bare[i]!(agent, via)),
        ]),
      ),
    ),
  );
  for (const agent of AGENTS)
    for (const [side, run] of sides)
      series.set(
        `${agent}/${side}`,
        wallTime(() => run(agent)),
      );
  const single = new Map([...sides.keys()].map((s) => [s, [] as number[]]));
  const floor = FLOOR_RUNNERS.map(() => new Map(clients.map((c) => [c, [] as number[]])));
  const floorOverhead = FLOOR_RUNNERS.map(() => new Map(clients.map((c) => [c, [] as number[]])));
  const overhead = new Map([...sides.keys()].map((s) => [s, [] as number[]]));
  for (let rep = 0; rep < reps; rep++) {
    const times = await inTurns(series, runs);
    FLOOR_RUNNERS.forEach((n, i) => {
      for (const via of clients) {
        const [s, p] = [times.get(`single/bare${n}/${via}`)!, times.get(`parent/bare${n}/${via}`)!];
        floor[i]!.get(via)!.push(...s);
        floorOverhead[i]!.get(via)!.push(spread(p).p50 - spread(s).p50);
      }
    });
    for (const side of sides.keys()) {
      const [s, p] = [times.get(`single/${side}`)!, times.get(`parent/${side}`)!];
      single.get(side)!.push(...s);
      overhead.get(side)!.push(spread(p).p50 - spread(s).p50);
    }
    ctx.note(`round trips: repetition ${rep + 1}/${reps}`);
  }
  const sdk = { single: spread(single.get('sdk')!), overhead: spread(overhead.get('sdk')!) };
  return [
    ...FLOOR_RUNNERS.flatMap((runners, i) =>
      clients.flatMap((client) => [
        figure('floor_bare_round_trip_p50', 'ms', spread(floor[i]!.get(client)!), {
          sdk: sdk.single,
          target: "reported: the single round trip's hops alone (docs/reference/benchmarks.md)",
          extra: { latencyMs: 0, client, runners, samples: floor[i]!.get(client)!.length },
        }),
        figure('floor_bare_delegation_overhead_p50', 'ms', spread(floorOverhead[i]!.get(client)!), {
          sdk: sdk.overhead,
          target: "reported: a delegation's hops alone, in stock BullMQ steps (docs/reference/benchmarks.md)",
          extra: { latencyMs: 0, client, runners, repetitions: reps, runsPerRepetition: runs },
        }),
      ]),
    ),
    ...roundTrips(ctx, single, overhead, sdk),
  ];
}

function roundTrips(
  ctx: BenchContext,
  single: Map<Side, number[]>,
  overhead: Map<Side, number[]>,
  sdk: { single: Spread; overhead: Spread },
): Figure[] {
  const { reps, runs } = ctx.opts;
  return ctx.clients.flatMap(({ name: client }) => [
    figure('single_round_trip_p50', 'ms', spread(single.get(client)!), {
      sdk: sdk.single,
      maxRatio: 2.5,
      target: '≤ 2.5 × SDK run()',
      extra: { latencyMs: 0, client, samples: single.get(client)!.length },
    }),
    figure('delegation_overhead_p50', 'ms', spread(overhead.get(client)!), {
      sdk: sdk.overhead,
      maxRatio: 1.5,
      target: '≤ 1.5 × SDK',
      extra: { latencyMs: 0, client, repetitions: reps, runsPerRepetition: runs },
    }),
  ]);
}
