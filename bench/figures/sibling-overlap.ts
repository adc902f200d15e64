import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { monotonicMs } from '../support/model-arrivals.js';
import { round, spread } from '../support/spread.js';
import { timeRuns } from '../support/time-runs.js';

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

/** Wall time of a parent delegating to 8 children at once, at model latency 50 ms, for each client. */
export async function siblingOverlapFigure(ctx: BenchContext): Promise<Figure[]> {
  const runs = Math.max(5, Math.floor(ctx.opts.runs / 10));
  await ctx.model.setLatency(LATENCY_MS);
  const wall = new Map(ctx.clients.map((c) => [c.name, [] as number[]]));
  const sdkWall: number[] = [];
  for (let rep = 0; rep < ctx.opts.reps; rep++) {
    for (const client of ctx.clients)
      wall.get(client.name)!.push(...(await timeRuns(() => client.invoke('fan'), runs)));
    sdkWall.push(...(await timeRuns(() => ctx.sdk('fan'), runs)));
  }
  const sdk = spread(sdkWall);
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
        extra: { latencyMs: LATENCY_MS, client, ideal: IDEAL_MS, ratioToIdeal, samples: sdkWall.length },
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
