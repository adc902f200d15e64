import { type BullQueueKey, bullKeys, dispatchKeys } from '@agentmesh/shared';
import { bullmqScript } from '@agentmesh/shared/queue/fast-path';
import { REDIS_NOW_MS } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import type { ChainableCommander, Redis } from 'ioredis';

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

// Before BullMQ's own stalled check (its installed text): the jobs in the queue's active list that
// the gone runner took (BullMQ keeps the taking worker's name in a job's `pb`, written in the step
// that sets its lock) lose their lock and join the stalled set, and the check's throttle key goes,
// so the check that follows moves them back to wait now, exactly as it would once their locks had
// lapsed: stalled count, failure past maxStalledCount, marker and `stalled` event are BullMQ's.
// When the runner holds none, BullMQ's check does not run. The gone runner also leaves the queue's blocked workers
// and their offers (shared queue/fast-path/dispatch.ts), so no add dispatches a job to it.
const RECLAIM_PRELUDE = `
local meshGone = ARGV[5]
redis.call("ZREM", ARGV[2] .. "${dispatchKeys.blocked('')}", meshGone)
redis.call("HDEL", ARGV[2] .. "${dispatchKeys.offers('')}", meshGone)
local meshFound = 0
for _, meshJobId in ipairs(redis.call("LRANGE", KEYS[3], 0, -1)) do
  local meshJobKey = ARGV[2] .. meshJobId
  if redis.call("HGET", meshJobKey, "pb") == meshGone then
    redis.call("DEL", meshJobKey .. "${bullKeys.lock('')}")
    redis.call("SADD", KEYS[1], meshJobId)
    meshFound = meshFound + 1
  end
end
if meshFound == 0 then return {} end
redis.call("DEL", KEYS[4])
`;

// The lease of the one runner that watches (a hash: holder, and when it last renewed by Redis's
// clock, so that no two hosts' clocks are compared): kept by its holder, taken once it went
// unrenewed for ARGV[2] ms, 0 for the others. A runner that takes a lapsed lease learns who held
// it and how long ago it last renewed.
const LEASE = `${REDIS_NOW_MS}
local now = redisNowMs()
local holder = redis.call("HGET", KEYS[1], "holder")
local renewed = tonumber(redis.call("HGET", KEYS[1], "renewed") or "0")
if holder and holder ~= ARGV[1] and now - renewed < tonumber(ARGV[2]) then return {0} end
redis.call("HSET", KEYS[1], "holder", ARGV[1], "renewed", now)
redis.call("PEXPIRE", KEYS[1], 60000)
if holder == ARGV[1] or not holder then return {1} end
return {1, holder, now - renewed}
`;

// A holder that stops watching gives the lease up, so another runner takes it at its next look.
const RELEASE = `
if redis.call("HGET", KEYS[1], "holder") == ARGV[1] then redis.call("DEL", KEYS[1]) end
return 0
`;

/** The gone-runner watch's connection, with its three steps. */
export interface GoneRunnerSteps extends Redis {
  /** [1] held, [0] not, [1, previous holder, ms since it renewed] taken over from a lapsed holder. */
  meshGoneRunnerLease(key: string, holder: string, leaseMs: number): Promise<[number, string?, number?]>;
  meshGoneRunnerRelease(key: string, holder: string): Promise<number>;
}

/** Defines the lease, its release and the reclaim (queued with queueReclaim) on the watch's connection. */
export function defineGoneRunnerSteps(conn: Redis): GoneRunnerSteps {
  conn.defineCommand('meshGoneRunnerLease', { numberOfKeys: 1, lua: LEASE });
  conn.defineCommand('meshGoneRunnerRelease', { numberOfKeys: 1, lua: RELEASE });
  conn.defineCommand('meshReclaimGone', {
    numberOfKeys: STALLED_CHECK.keys,
    lua: RECLAIM_PRELUDE + STALLED_CHECK.content,
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
