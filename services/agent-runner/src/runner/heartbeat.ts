import type { KeyLayout, Logger } from '@agentmesh/shared';
import type { Redis } from 'ioredis';

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
  redis: Redis,
  keys: KeyLayout,
  hosted: readonly string[],
  id: string,
  log: Logger,
): Promise<Heartbeat> {
  const beat = async () => {
    const expiry = Date.now() + HEARTBEAT_MS * 3;
    const p = redis.pipeline();
    for (const name of hosted)
      p.zadd(keys.agentRunners(name), expiry, id).zremrangebyscore(keys.agentRunners(name), 0, Date.now());
    await p.exec().catch((e: Error) => log.warn({ err: e.message }, 'heartbeat failed'));
  };
  await beat();
  const timer = setInterval(() => void beat(), HEARTBEAT_MS);
  return {
    stop() {
      clearInterval(timer);
    },
    async withdraw() {
      const p = redis.pipeline();
      for (const name of hosted) p.zrem(keys.agentRunners(name), id);
      await p.exec().catch(() => undefined);
    },
  };
}
