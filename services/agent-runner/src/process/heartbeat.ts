import type { KeyLayout, Logger } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

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

/** Announces runner `id` for `hosted` agents now and every 2 s; an entry expires after three missed beats. */
export async function startHeartbeat(
  redis: MeshRedis,
  keys: KeyLayout,
  hosted: readonly string[],
  id: string,
  log: Logger,
): Promise<Heartbeat> {
  const beat = async () => {
    const expiry = Date.now() + HEARTBEAT_MS * 3;
    // One pipeline per set: each has its own hash tag (its own cluster slot).
    await Promise.all(
      [keys.runners(), ...hosted.map((name) => keys.agentRunners(name))].map((set) =>
        redis.pipeline().zadd(set, expiry, id).zremrangebyscore(set, 0, Date.now()).exec(),
      ),
    ).catch((e: Error) => log.warn({ err: e.message }, 'heartbeat failed'));
  };
  await beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  return {
    stop() {
      clearInterval(timer);
    },
    async withdraw(drained) {
      const sets = hosted.map((name) => keys.agentRunners(name));
      if (drained) sets.push(keys.runners());
      await Promise.all(sets.map((set) => redis.zrem(set, id))).catch(() => undefined);
    },
  };
}
