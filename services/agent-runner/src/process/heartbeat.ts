import type { KeyLayout, Logger } from '@agentmesh/shared';
import { isRedisCluster, type MeshRedis } from '@agentmesh/shared/redis';

const HEARTBEAT_MS = 2000;

/**
 * A runner's presence in each hosted agent's runner set, which the gateway's readiness reads, and
 * in the mesh's set of runners, which the gone-runner watch reads (gone-runners.ts).
 */
export interface Heartbeat {
  /** Stops beating (the entries expire unless withdrawn first). */
  stop(): void;
  /**
   * Takes the runner out of every agent's set at once, and out of the mesh's set when `drained`:
   * a runner that leaves jobs it holds stays there, so the gone-runner watch moves them on once its
   * connections close instead of when their locks lapse.
   */
  withdraw(drained: boolean): Promise<void>;
}

/**
 * Beats between two prunings of the sets: their readers count only entries whose expiry is ahead
 * (the gateway's readiness, the gone-runner watch), so an expired one is only memory, and a set
 * grows by at most the runners started in between.
 */
const PRUNE_EVERY = 15;

/**
 * Announces runner `id` for `hosted` agents now and every `intervalMs` (2 s); an entry expires after
 * three missed beats. On one Redis server a beat is one pipeline, one write, however many agents the
 * runner hosts (on a cluster, one per set: each has its own hash tag, its own slot).
 */
export async function startHeartbeat(
  redis: MeshRedis,
  keys: KeyLayout,
  hosted: readonly string[],
  id: string,
  log: Logger,
  { intervalMs = HEARTBEAT_MS }: { intervalMs?: number } = {},
): Promise<Heartbeat> {
  const sets = [keys.runners(), ...hosted.map((name) => keys.agentRunners(name))];
  const perSet = isRedisCluster(redis);
  let beats = 0;
  const beat = async () => {
    const now = Date.now();
    const prune = beats++ % PRUNE_EVERY === 0;
    const one = perSet ? undefined : redis.pipeline();
    const pipelines = sets.map((set) => {
      const write = one ?? redis.pipeline();
      write.zadd(set, now + intervalMs * 3, id);
      if (prune) write.zremrangebyscore(set, 0, now);
      return write;
    });
    await Promise.all([...new Set(pipelines)].map((p) => p.exec())).catch((e: Error) =>
      log.warn({ err: e.message }, 'heartbeat failed'),
    );
  };
  await beat();
  const timer = setInterval(() => void beat(), intervalMs);
  return {
    stop() {
      clearInterval(timer);
    },
    async withdraw(drained) {
      const left = drained ? sets : sets.slice(1);
      await Promise.all(left.map((set) => redis.zrem(set, id))).catch(() => undefined);
    },
  };
}
