import { keyLayout } from '@agentmesh/shared';
import { type MonitoredCommand, monitorRedis } from '@agentmesh/test-support/redis-monitor';
import type { BenchContext } from '../support/bench-context.js';
import { LONG_REPLY_CHUNKS } from '../support/bench-script.js';
import { type Figure, figure } from '../support/figure.js';
import { tally } from './redis-commands.js';

const keys = keyLayout('mesh');
/** How a tree's delta stream and watch key end, whatever the tree (`…{<rootId>}:deltas`). */
const TREE_KEY_ENDS = [keys.deltas('@'), keys.watch('@')].map((k) => k.slice(k.indexOf('@') + 1));

/**
 * Redis commands the deltas of one 2,000-piece reply cost (`long`, streamed 1 ms apart), MONITOR
 * over one watched run (through `invoke?stream=true`) and one unwatched run of the same reply (a
 * plain invoke): the commands clients sent that name the tree's delta stream or its watch key —
 * the runner's XADDs and PEXPIREs, its watch checks, the gateway's XREADs and watch renewals — in
 * the watched run, less those in the unwatched one (its runner's watch checks). Counted by name,
 * not as a difference of all commands: the mesh's background work (heartbeats, stalled checks on
 * every agent's queue) is hundreds of commands per run-length window and moves more than that.
 * The runner's writes alone (XADD, PEXPIRE) are a figure of their own. MONITOR slows Redis, so
 * these runs are timed by nothing.
 */
export async function deltaCommandFigures(ctx: BenchContext): Promise<Figure[]> {
  await ctx.model.setLatency(0);
  const port = Number(new URL(ctx.mesh.redisUrl).port);
  const monitored = async (run: () => Promise<unknown>) => {
    const monitor = await monitorRedis(port); // on once it answered +OK
    await run();
    monitor.stop();
    return monitor.seen;
  };
  // One tree runs in each window, so a delta stream or watch key named there is its own.
  const watched = tally(namingTree(await monitored(() => ctx.clients[0]!.stream('long'))));
  const unwatched = tally(namingTree(await monitored(() => ctx.invoke('long'))));
  const spent = watched.trips - unwatched.trips;
  // The runner's part: its writes to the delta stream (each XADD a delta event, PEXPIRE its TTL).
  const writes = (watched.byCommand.get('xadd') ?? 0) + (watched.byCommand.get('pexpire') ?? 0);
  const extra = { chunks: LONG_REPLY_CHUNKS, chunkMs: 1 };
  const one = (n: number) => ({ p10: n, p50: n, p90: n });
  return [
    figure('redis_commands_long_reply_deltas', 'commands/run', one(spent), {
      target: '≤ 100',
      ok: spent <= 100,
      extra: {
        ...extra,
        watchedByCommand: Object.fromEntries(watched.byCommand),
        unwatchedByCommand: Object.fromEntries(unwatched.byCommand),
      },
    }),
    figure('redis_writes_long_reply_deltas', 'commands/run', one(writes), {
      target: "reported: the runner's XADDs and PEXPIREs of the same run",
      extra,
    }),
  ];
}

/** The commands clients sent that name a tree's delta stream or watch key. */
function namingTree(seen: readonly MonitoredCommand[]): MonitoredCommand[] {
  return seen.filter(
    (c) => c.source !== 'lua' && c.args.some((a) => TREE_KEY_ENDS.some((end) => a.endsWith(end))),
  );
}
