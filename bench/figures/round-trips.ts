import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { spread } from '../support/spread.js';
import { timeRuns } from '../support/time-runs.js';

/** Sequential runs in one block: each series is timed in blocks this long, the four taking turns. */
const BLOCK = 20;
/**
 * A pause before each block: what the last run of the other side left to do after it answered
 * (the mesh completes its job after the response) is done before this side's clock starts, so
 * neither side's block pays for the other's tail.
 */
const SETTLE_MS = 20;

/** The series of a block round, in turn: agent and side. */
const SERIES = [
  ['single', 'mesh'],
  ['single', 'sdk'],
  ['single', 'fetch'],
  ['parent', 'mesh'],
  ['parent', 'sdk'],
] as const;

/**
 * Single agent round trip (mesh: through the gateway; SDK: `run()`) and delegation overhead
 * (parent + 1 delegation minus single, per repetition), at model latency 0. Within a repetition
 * the series (mesh and SDK, single and parent, and the mesh's single through fetch) take turns in
 * blocks of 20 runs, so a change of the machine's speed during it (this VM's load moves the SDK's
 * own times by 2 × within an hour) reaches both sides alike, and their ratio stays steady where
 * their times do not. The mesh's client is undici's `request` (mesh-client.ts); the single run
 * through Node's fetch is reported beside it, so what the client costs is in plain view.
 */
export async function roundTripFigures(ctx: BenchContext): Promise<Figure[]> {
  const { reps, runs } = ctx.opts;
  await ctx.model.setLatency(0);
  const single = { mesh: [] as number[], sdk: [] as number[] };
  const overhead = { mesh: [] as number[], sdk: [] as number[] };
  const sides = { mesh: ctx.invoke, sdk: ctx.sdk, fetch: ctx.invokeFetch } as const;
  const viaFetch: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const times = {
      mesh: { single: [] as number[], parent: [] as number[] },
      sdk: { single: [] as number[], parent: [] as number[] },
      fetch: { single: [] as number[], parent: [] as number[] },
    };
    for (let done = 0; done < runs; done += BLOCK) {
      const n = Math.min(BLOCK, runs - done);
      for (const [agent, side] of SERIES) {
        await new Promise((r) => setTimeout(r, SETTLE_MS));
        times[side][agent].push(...(await timeRuns(() => sides[side](agent), n)));
      }
    }
    viaFetch.push(...times.fetch.single);
    for (const side of ['mesh', 'sdk'] as const) {
      single[side].push(...times[side].single);
      overhead[side].push(spread(times[side].parent).p50 - spread(times[side].single).p50);
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
    figure('single_round_trip_fetch_p50', 'ms', spread(viaFetch), {
      sdk: spread(single.sdk),
      target: 'reported: the single round trip with Node fetch as the client',
      extra: { latencyMs: 0, samples: viaFetch.length },
    }),
    figure('delegation_overhead_p50', 'ms', spread(overhead.mesh), {
      sdk: spread(overhead.sdk),
      maxRatio: 1.5,
      target: '≤ 1.5 × SDK',
      extra: { latencyMs: 0, repetitions: reps, runsPerRepetition: runs },
    }),
  ];
}
