import type { KeyLayout, MeshRedis } from '@agentmesh/shared';

/** How long the watch flag lives unless refreshed, and how often an open stream refreshes it. */
export const WATCH_TTL_MS = 30_000;
export const WATCH_REFRESH_MS = 10_000;

/**
 * Marks the tree watched while a delta stream of it is open (docs/reference/redis-layout.md,
 * `keys.watch`): runners publish deltas only while the flag exists. Set now, refreshed every
 * WATCH_REFRESH_MS; the returned stop ends the refreshing, and the flag expires WATCH_TTL_MS later
 * (another stream of the tree may still be refreshing it). A failed write is left to the next.
 */
export async function watchTree(redis: MeshRedis, keys: KeyLayout, rootId: string): Promise<() => void> {
  const key = keys.watch(rootId);
  const set = () => redis.set(key, '1', 'PX', WATCH_TTL_MS).catch(() => undefined);
  await set();
  const timer = setInterval(() => void set(), WATCH_REFRESH_MS);
  timer.unref();
  return () => clearInterval(timer);
}
