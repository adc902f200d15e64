import type { KeyLayout, Logger, MeshRedis } from '@agentmesh/shared';

const HEARTBEAT_MS = 2000;

/** A runner's presence in each hosted agent's runner set, which the gateway's readiness reads. */
export interface Heartbeat {
  /** Stops beating (the entries expire unless withdrawn first). */
  stop(): void;
  /** Takes the runner out of every set at once. */
  withdraw(): Promise<void>;
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
    // One pipeline per agent: each agent's set has its own hash tag (its own cluster slot).
    await Promise.all(
      hosted.map((name) =>
        redis
          .pipeline()
          .zadd(keys.agentRunners(name), expiry, id)
          .zremrangebyscore(keys.agentRunners(name), 0, Date.now())
          .exec(),
      ),
    ).catch((e: Error) => log.warn({ err: e.message }, 'heartbeat failed'));
  };
  await beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  return {
    stop() {
      clearInterval(timer);
    },
    async withdraw() {
      await Promise.all(hosted.map((name) => redis.zrem(keys.agentRunners(name), id))).catch(() => undefined);
    },
  };
}
