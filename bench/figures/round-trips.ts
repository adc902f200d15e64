import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import type { ClientName } from '../support/mesh-client.js';
import { spread } from '../support/spread.js';
import { timeRuns } from '../support/time-runs.js';

/** Sequential runs in one block: each series is timed in blocks this long, the series taking turns. */
const BLOCK = 20;
/**
 * A pause before each block: what the last run of the other side left to do after it answered
 * (the mesh completes its job after the response) is done before this side's clock starts, so
 * neither side's block pays for the other's tail.
 */
const SETTLE_MS = 20;

type Side = ClientName | 'sdk';
const AGENTS = ['single', 'parent'] as const;

/**
 * Single agent round trip (mesh: through the gateway; SDK: `run()`) and delegation overhead
 * (parent + 1 delegation minus single, per repetition), at model latency 0, for each client of the
 * mesh. Within a repetition the series (the SDK and the mesh through each client, single and parent)
 * take turns in blocks of 20 runs, so a change of the machine's speed during it (this VM's load
 * moves the SDK's own times by 2 × within an hour) reaches every side alike, and their ratio stays
 * steady where their times do not.
 */
export async function roundTripFigures(ctx: BenchContext): Promise<Figure[]> {
  const { reps, runs } = ctx.opts;
  await ctx.model.setLatency(0);
  const sides = new Map<Side, (agent: string) => Promise<unknown>>([
    ...ctx.clients.map((c) => [c.name, c.invoke] as const),
    ['sdk', (agent: string) => ctx.sdk(agent as 'single' | 'parent')],
  ]);
  const single = new Map([...sides.keys()].map((s) => [s, [] as number[]]));
  const overhead = new Map([...sides.keys()].map((s) => [s, [] as number[]]));
  for (let rep = 0; rep < reps; rep++) {
    const times = new Map(
      [...sides.keys()].map((s) => [s, { single: [] as number[], parent: [] as number[] }]),
    );
    for (let done = 0; done < runs; done += BLOCK) {
      const n = Math.min(BLOCK, runs - done);
      for (const agent of AGENTS)
        for (const [side, run] of sides) {
          await new Promise((r) => setTimeout(r, SETTLE_MS));
          times.get(side)![agent].push(...(await timeRuns(() => run(agent), n)));
        }
    }
    for (const [side, t] of times) {
      single.get(side)!.push(...t.single);
      overhead.get(side)!.push(spread(t.parent).p50 - spread(t.single).p50);
    }
    ctx.note(`round trips: repetition ${rep + 1}/${reps}`);
  }
  const sdk = { single: spread(single.get('sdk')!), overhead: spread(overhead.get('sdk')!) };
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
