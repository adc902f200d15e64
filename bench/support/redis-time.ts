import type { Redis } from 'ioredis';
import type { MeshInvoke } from './mesh-client.js';
import { stepName } from './step-name.mjs';

/** One command or script, per run of an agent: how often it ran, and Redis's time in it. */
export interface RedisStep {
  /** The command, or for a script `evalsha <key count> <first key>` with its ids as `*` (as bench/hops.ts names it). */
  name: string;
  callsPerRun: number;
  usPerCall: number;
  usPerRun: number;
}

/** Where Redis's time goes in `runs` sequential runs of one agent. */
export interface RedisTime {
  agent: string;
  runs: number;
  /** Redis's CPU (user + system, from INFO cpu) per run: executing commands, and its I/O. */
  cpuPerRunMs: number;
  /** What Redis counted executing commands per run (INFO commandstats; a script's commands are in its time too). */
  commandsUsPerRun: number;
  /** Each command or script clients sent, by Redis's time in it per run, most first (SLOWLOG). */
  steps: RedisStep[];
}

const processed = async (redis: Redis) =>
  Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))?.[1]);

/**
 * Until Redis has run no command but this reading's own for 150 ms (3 s at most): long enough for
 * a runner on a loaded machine to have completed the job of a run already answered.
 */
async function quiet(redis: Redis): Promise<void> {
  const until = Date.now() + 3000;
  for (let last = await processed(redis); Date.now() < until; ) {
    await new Promise((r) => setTimeout(r, 150));
    const now = await processed(redis);
    if (now - last <= 1) return;
    last = now;
  }
}

const cpuSeconds = (info: string) =>
  Number(/used_cpu_user:([\d.]+)/.exec(info)?.[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)?.[1]);

const commandsUs = (info: string) =>
  [...info.matchAll(/^cmdstat_[^:]+:calls=\d+,usec=(\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);

/**
 * Runs `agent` `runs` times, one after the other, and reads where Redis's time went: its CPU and
 * its command time from INFO (counters reset first), and each command clients sent from SLOWLOG,
 * which notes every command taking at least `slowUs` µs with its arguments. A threshold above what
 * one command inside a script takes (a few µs) keeps those out, so the log costs the scripts
 * nothing; below what a script takes (tens of µs), every script is in it. A command under the
 * threshold is missing from `steps` (an `HGET` sent alone takes about 1 µs). The Redis is the mesh's
 * own: its SLOWLOG settings are put back after.
 */
export async function redisTime(
  redis: Redis,
  invoke: MeshInvoke,
  agent: string,
  runs: number,
  slowUs: number,
): Promise<RedisTime> {
  const before = (await redis.config('GET', 'slowlog-*')) as string[];
  // Room for every command of every run at threshold 0 (a parent's run: about 250, a script's own included).
  const maxLen = Math.max(1024, runs * 512);
  await redis.config('SET', 'slowlog-max-len', String(maxLen));
  // The run before (a warm-up's) may still be completing its job after its answer: left out.
  await quiet(redis);
  await redis.config('RESETSTAT');
  await redis.slowlog('RESET');
  await redis.config('SET', 'slowlog-log-slower-than', String(slowUs));
  const cpu0 = cpuSeconds(await redis.info('cpu'));
  try {
    for (let i = 0; i < runs; i++) await invoke(agent);
    // The last run's own steps after its answer (BullMQ's completion of its job) are in it too.
    await quiet(redis);
  } finally {
    await redis.config('SET', 'slowlog-log-slower-than', '-1');
  }
  const cpu1 = cpuSeconds(await redis.info('cpu'));
  const commands = commandsUs(await redis.info('commandstats'));
  const log = (await redis.slowlog('GET', -1)) as [number, number, number, unknown[]][];
  for (let i = 0; i + 1 < before.length; i += 2) await redis.config('SET', before[i]!, before[i + 1]!);
  await redis.slowlog('RESET');
  if (log.length >= maxLen) throw new Error(`SLOWLOG overflowed at ${maxLen} entries: raise the threshold`);
  const by = new Map<string, { calls: number; us: number }>();
  for (const [, , us, args] of log) {
    const name = stepName(String(args[0] ?? ''), args[2], args[3]);
    if (name === 'config' || name === 'info' || name === 'slowlog') continue;
    const step = by.get(name) ?? { calls: 0, us: 0 };
    step.calls++;
    step.us += us;
    by.set(name, step);
  }
  const steps = [...by]
    .map(([name, s]) => ({
      name,
      callsPerRun: s.calls / runs,
      usPerCall: s.us / s.calls,
      usPerRun: s.us / runs,
    }))
    .sort((a, b) => b.usPerRun - a.usPerRun);
  return {
    agent,
    runs,
    cpuPerRunMs: ((cpu1 - cpu0) * 1000) / runs,
    commandsUsPerRun: commands / runs,
    steps,
  };
}
