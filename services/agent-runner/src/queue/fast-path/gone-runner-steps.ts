import { type BullQueueKey, bullKeys } from '@agentmesh/shared';
import type { Queue } from 'bullmq';
import type { ChainableCommander, Redis } from 'ioredis';
import { bullmqScript } from './bullmq-script.js';
import { runnerLua } from './runner-lua.js';

const STALLED_CHECK = bullmqScript('moveStalledJobsToWait', 9);
// Its keys, in its order (BullMQ's backend, moveStalledJobsToWaitArgs), as suffixes of the queue's key.
const STALLED_CHECK_KEYS: BullQueueKey[] = [
  'stalled',
  'wait',
  'active',
  'stalled-check',
  'meta',
  'paused',
  'marker',
  'events',
  'repeat',
];

/** The gone-runner watch's connection, with its three steps. */
export interface GoneRunnerSteps extends Redis {
  /** [1] held, [0] not, [1, previous holder, ms since it renewed] taken over from a lapsed holder. */
  meshGoneRunnerLease(key: string, holder: string, leaseMs: number): Promise<[number, string?, number?]>;
  meshGoneRunnerRelease(key: string, holder: string): Promise<number>;
}

/** Defines the lease, its release and the reclaim (queued with queueReclaim) on the watch's connection. */
export function defineGoneRunnerSteps(conn: Redis): GoneRunnerSteps {
  conn.defineCommand('meshGoneRunnerLease', runnerLua.script('gone-runner-lease', 1));
  conn.defineCommand('meshGoneRunnerRelease', runnerLua.script('gone-runner-release', 1));
  // BullMQ's stalled check, the gone runner's jobs made stalled first (lua/reclaim-gone.lua).
  conn.defineCommand('meshReclaimGone', {
    numberOfKeys: STALLED_CHECK.keys,
    lua: runnerLua.text('reclaim-gone', { STALLED_CHECK: STALLED_CHECK.content }),
  });
  return conn as GoneRunnerSteps;
}

/**
 * Queues on `write` the reclaim of runner `id`'s active jobs in `queue`, called as BullMQ calls its
 * own stalled check, with the runner last; its reply is the ids of the jobs moved back to wait.
 */
export function queueReclaim(
  write: ChainableCommander,
  queue: Queue,
  stalled: { maxStalledCount: number; stalledInterval: number },
  id: string,
): void {
  const step = (write as unknown as { meshReclaimGone: (...args: (string | number)[]) => unknown })
    .meshReclaimGone;
  step.call(
    write,
    ...STALLED_CHECK_KEYS.map((name) => bullKeys.queue(queue.toKey(''), name)),
    ...[stalled.maxStalledCount, queue.toKey(''), Date.now(), stalled.stalledInterval, id],
  );
}
