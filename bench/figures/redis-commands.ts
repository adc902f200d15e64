import type { BenchContext } from '../support/bench-context.js';
import { type Figure, figure } from '../support/figure.js';
import { round } from '../support/spread.js';

const TOP = 8;

/**
 * Redis commands per run, counted with MONITOR over `runs` sequential runs of single and of parent:
 * commands clients sent (a Lua script is one; a pipeline or MULTI counts each command it holds, so
 * round trips are fewer), the commands scripts ran inside Redis, and the most frequent per run. For profiling; MONITOR slows Redis, so this
 * group times nothing. Background work (heartbeats, stalled checks) is counted too: it is small.
 */
export async function redisCommandFigures(ctx: BenchContext): Promise<Figure[]> {
  await ctx.model.setLatency(0);
  const figures: Figure[] = [];
  for (const agent of ['single', 'parent'] as const) {
    const monitor = await ctx.mesh.redis.monitor();
    const byCommand = new Map<string, number>();
    let trips = 0;
    let inLua = 0;
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source === 'lua') return void inLua++;
      trips++;
      const name = (args[0] ?? '?').toLowerCase();
      byCommand.set(name, (byCommand.get(name) ?? 0) + 1);
    });
    await new Promise((r) => setTimeout(r, 200)); // MONITOR is on once Redis echoed a command to it
    for (let i = 0; i < ctx.opts.runs; i++) await ctx.invoke(agent);
    await new Promise((r) => setTimeout(r, 200));
    monitor.disconnect();
    const per = (n: number) => round(n / ctx.opts.runs);
    const top = Object.fromEntries(
      [...byCommand.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, TOP)
        .map(([name, n]) => [name, per(n)]),
    );
    const one = per(trips);
    figures.push(
      figure(
        `redis_commands_${agent}`,
        'commands/run',
        { p10: one, p50: one, p90: one },
        {
          target: 'reported (a Redis round trip is ~0.06 ms here)',
          extra: { runs: ctx.opts.runs, commandsInsideScripts: per(inLua), top },
        },
      ),
    );
  }
  return figures;
}
