import { type KeyLayout, type Logger, runnerClientName } from '@agentmesh/shared';
import { connectRedis, type RedisTarget } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { defineGoneRunnerSteps, type GoneRunnerSteps, queueReclaim } from './gone-runner-steps.js';

/** How the watch runs; the defaults are the runner's. */
export interface GoneRunnerWatchOptions {
  redis: RedisTarget;
  keys: KeyLayout;
  runnerId: string;
  /** Every agent's queue of the plan, by agent name: a gone runner's jobs may be in any. */
  queues: ReadonlyMap<string, Queue>;
  /** BullMQ's stalled-check settings, as the runner's workers have them (agent-worker.ts). */
  stalled: { maxStalledCount: number; stalledInterval: number };
  /**
   * How long after a disruption the watch waits before it judges others: after Redis started, or
   * after the watch's own connection came back, every runner reconnects, some later than others
   * (ioredis waits up to 2 s between tries); the runner waits 3 s.
   */
  settleMs: number;
  log: Logger;
  /** Called with the number of jobs moved on from each gone runner, and its id. */
  onReclaimed?: (jobs: number, runnerId: string) => void;
  /** How often the lease holder reads CLIENT LIST (ms). */
  pollMs?: number;
  /** How long a runner must have had no connection before it counts as gone (ms). */
  graceMs?: number;
  /** How long the lease outlives a holder that stopped renewing it (ms). */
  leaseMs?: number;
}

/**
 * Moves the jobs of a runner whose process is gone back to their queues within about a second,
 * instead of when their BullMQ locks lapse (RUNNER_LOCK_MS, then up to half of it until a stalled
 * check runs). A process that dies (SIGKILL, OOM, crash) has its sockets closed by the kernel, so
 * Redis drops its connections at once; one that is merely slow (a long GC, a starved CPU, a
 * SIGSTOP) keeps them, and keeps its jobs until its locks lapse, as before. Every connection of a
 * runner bears its name; the one runner holding the lease reads CLIENT LIST every `pollMs`, and a
 * runner of the mesh's set (heartbeat.ts) with no connection left for `graceMs` is gone: its
 * active jobs go through BullMQ's own stalled check at once, and it leaves the runner sets.
 *
 * A lost host or network closes no socket that Redis sees; for those the locks stay the bound.
 * Reclaiming a live runner's job is safe (fencing, docs/architecture/durability-and-fencing.md) but wasteful; the grace, the
 * settling time after a reconnect and a name on every connection keep it from happening. Not on a
 * Redis Cluster (CLIENT LIST is per node), nor where CLIENT LIST or CLIENT SETNAME is refused (an
 * ACL, a proxy): there the locks alone recover jobs, and the watch says so once.
 */
export class GoneRunnerWatch {
  private readonly conn: GoneRunnerSteps;
  private readonly absentSince = new Map<string, number>();
  /** When the watch may judge: settleMs after Redis started or its connection came back; undefined while down. */
  private settledAt: number | undefined;
  private connectedBefore = false;
  private unnamed = false;
  /** CLIENT LIST was refused: the watch has stopped for good. */
  private refused = false;
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;
  private readonly pollMs: number;
  private readonly graceMs: number;
  private readonly leaseMs: number;

  constructor(private readonly opts: GoneRunnerWatchOptions) {
    this.pollMs = opts.pollMs ?? 250;
    this.graceMs = opts.graceMs ?? 500;
    this.leaseMs = opts.leaseMs ?? 750;
    // Commands fail at once while it is disconnected: a tick then waits for the next.
    this.conn = defineGoneRunnerSteps(
      connectRedis(opts.redis, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 1,
        connectionName: runnerClientName(opts.keys, opts.runnerId),
      }) as Redis,
    );
    this.conn.on('ready', () => void this.settle());
    this.conn.on('close', () => {
      this.settledAt = undefined;
    });
    this.conn.on('error', () => undefined); // a tick reports what matters; ioredis reconnects
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.pollMs);
    this.timer.unref();
  }

  /** Stops watching, gives the lease up and closes the watch's connection. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.conn
      .meshGoneRunnerRelease(this.opts.keys.goneRunnerLease(), this.opts.runnerId)
      .catch(() => undefined); // Redis unreachable: the lease lapses by itself
    this.conn.disconnect();
  }

  // A process's first connection follows no disruption of its own, but Redis may have just started.
  private async settle(): Promise<void> {
    const readyAt = Date.now();
    const reconnected = this.connectedBefore;
    this.connectedBefore = true;
    try {
      const info = String(await this.conn.info('server'));
      const uptimeMs = Number(/uptime_in_seconds:(\d+)/.exec(info)?.[1] ?? 0) * 1000;
      const since = Math.max(readyAt - uptimeMs, reconnected ? readyAt : 0);
      if (this.conn.status === 'ready') this.settledAt = since + this.opts.settleMs;
    } catch {
      if (this.conn.status === 'ready') this.settledAt = readyAt + this.opts.settleMs;
    }
  }

  /** One look: exported for tests, which call it instead of waiting for the timer. */
  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      await this.look();
    } catch (e) {
      this.failed(e as Error);
    } finally {
      this.ticking = false;
    }
  }

  private async look(): Promise<void> {
    const { keys, runnerId } = this.opts;
    if (this.refused) return;
    if (this.settledAt === undefined || Date.now() < this.settledAt) {
      this.absentSince.clear();
      return;
    }
    const [held, lapsed, idleMs] = await this.conn.meshGoneRunnerLease(
      keys.goneRunnerLease(),
      runnerId,
      this.leaseMs,
    );
    if (held !== 1) {
      this.absentSince.clear(); // another runner watches; a history of our own would be stale
      return;
    }
    const now = Date.now();
    // The holder before us stopped renewing idleMs ago (≥ leaseMs ≥ graceMs): if it has no
    // connection left either, it is gone since then, not since now.
    if (lapsed && idleMs !== undefined) this.absentSince.set(lapsed, now - idleMs);
    // The set before the list, in one write: a runner in the set was connected before it joined.
    const replies = await this.conn
      .pipeline()
      .zrangebyscore(keys.runners(), now, '+inf')
      .call('CLIENT', 'LIST', 'TYPE', 'normal')
      .exec();
    const [setReply, listReply] = replies ?? [];
    if (setReply?.[0]) throw setReply[0];
    if (listReply?.[0]) throw listReply[0];
    const live = clientNames(String(listReply?.[1] ?? ''));
    // Names this watch cannot see on its own connection are not set (ioredis ignores a refused
    // SETNAME): every runner would look gone. Judge nobody then.
    if (!live.has(runnerClientName(keys, runnerId))) {
      if (!this.unnamed) {
        this.unnamed = true;
        this.opts.log.warn(
          {},
          'CLIENT SETNAME is refused: jobs of a runner that dies move on only once their locks lapse (RUNNER_LOCK_MS)',
        );
      }
      return;
    }
    const registered = new Set((setReply?.[1] as string[] | undefined) ?? []);
    for (const id of this.absentSince.keys()) if (!registered.has(id)) this.absentSince.delete(id);
    for (const id of registered) {
      if (id === runnerId || live.has(runnerClientName(keys, id))) {
        this.absentSince.delete(id);
        continue;
      }
      const since = this.absentSince.get(id) ?? now;
      this.absentSince.set(id, since);
      if (now - since >= this.graceMs) await this.reclaim(id);
    }
  }

  /** Moves runner `id`'s active jobs on through BullMQ's stalled check, and takes it out of the runner sets. */
  private async reclaim(id: string): Promise<void> {
    const { keys, stalled, queues } = this.opts;
    const write = this.conn.pipeline();
    for (const queue of queues.values()) queueReclaim(write, queue, stalled, id);
    for (const set of [keys.runners(), ...[...queues.keys()].map((agent) => keys.agentRunners(agent))]) {
      write.zrem(set, id);
    }
    let jobs = 0;
    for (const [err, moved] of (await write.exec()) ?? []) {
      if (err) throw err;
      if (Array.isArray(moved)) jobs += moved.length;
    }
    this.absentSince.delete(id);
    this.opts.onReclaimed?.(jobs, id);
    const level = jobs > 0 ? 'warn' : 'info';
    this.opts.log[level](
      { runner: id, jobs },
      'a runner has no Redis connection left (its process is gone): its jobs go back to their queues now',
    );
  }

  private failed(e: Error): void {
    // A refused CLIENT LIST (an ACL, a proxy) will not pass later: stop, and leave it to the locks.
    if (e.name === 'ReplyError' && /CLIENT|NOPERM|unknown command/i.test(e.message)) {
      this.refused = true;
      clearInterval(this.timer);
      this.opts.log.warn(
        { err: e.message },
        'CLIENT LIST is refused: jobs of a runner that dies move on only once their locks lapse (RUNNER_LOCK_MS)',
      );
      return;
    }
    this.opts.log.debug({ err: e.message }, 'gone-runner watch: a look failed; the next one retries');
  }
}

/** The names in a CLIENT LIST reply (`name=` of each line; names hold no space). */
function clientNames(list: string): Set<string> {
  const names = new Set<string>();
  for (const line of list.split('\n')) {
    const m = / name=(\S+)/.exec(line);
    if (m) names.add(m[1]!);
  }
  return names;
}
