import { type MonitoredCommand, monitorRedis } from '@agentmesh/test-support/redis-monitor';
import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { round } from '../support/spread.js';

const TOP = 8;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Redis commands per run, counted with MONITOR over `runs` sequential runs of single and of parent:
 * commands clients sent (a Lua script is one; a pipeline or MULTI counts each command it holds, so
 * round trips are fewer), the commands scripts ran inside Redis, and the most frequent per run. For profiling; MONITOR slows Redis, so this
 * group times nothing. Background work (heartbeats, stalled checks, the gone-runner watch) is
 * measured on the idle mesh right after, over as long, and taken out of the figure; with it is reported too.
 * MONITOR is read on a raw socket (test-support's monitorRedis): ioredis's monitor mode took a line
 * that came before it switched for a reply to nothing, and its error ended the bench.
 */
export async function redisCommandFigures(ctx: BenchContext): Promise<Figure[]> {
  await ctx.model.setLatency(0);
  const figures: Figure[] = [];
  for (const agent of ['single', 'parent'] as const) {
    const port = Number(new URL(ctx.mesh.redisUrl).port);
    const monitor = await monitorRedis(port); // on once it answered +OK
    const started = performance.now();
    for (let i = 0; i < ctx.opts.runs; i++) await ctx.invoke(agent);
    await sleep(200);
    const windowMs = performance.now() - started;
    monitor.stop();
    // The same mesh idle for as long (at most 5 s): what it sends without a run, per ms.
    const idle = await monitorRedis(port);
    const idleMs = Math.min(windowMs, 5000);
    await sleep(idleMs);
    idle.stop();
    const background = idle.seen.filter((c) => c.source !== 'lua').length / idleMs;
    const { trips, inLua, byCommand } = tally(monitor.seen);
    const per = (n: number) => round(n / ctx.opts.runs);
    const top = topOf(byCommand, per);
    const backgroundTop = topOf(tally(idle.seen).byCommand, (n) => round((n / idleMs) * 1000));
    const one = per(Math.max(0, trips - background * windowMs));
    figures.push(
      figure(
        `redis_commands_${agent}`,
        'commands/run',
        { p10: one, p50: one, p90: one },
        {
          target: "reported, the idle mesh's background taken out (a Redis round trip is ~0.06 ms here)",
          extra: {
            runs: ctx.opts.runs,
            withBackground: per(trips),
            backgroundPerSecond: round(background * 1000),
            backgroundTop,
            commandsInsideScripts: per(inLua),
            top,
          },
        },
      ),
    );
  }
  return figures;
}

/** Commands clients sent (by name) and commands scripts ran, of what MONITOR saw. */
export function tally(seen: readonly MonitoredCommand[]) {
  const byCommand = new Map<string, number>();
  let trips = 0;
  let inLua = 0;
  for (const { source, args } of seen) {
    if (source === 'lua') {
      inLua++;
      continue;
    }
    trips++;
    const name = (args[0] ?? '?').toLowerCase();
    byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
  }
  return { trips, inLua, byCommand };
}

/** The TOP most frequent commands, each scaled by `scale`. */
export function topOf(
  byCommand: ReadonlyMap<string, number>,
  scale: (n: number) => number,
): Record<string, number> {
  return Object.fromEntries(
    [...byCommand.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(([name, n]) => [name, scale(n)]),
  );
}
