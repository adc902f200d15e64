import type { KeyLayout } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

/**
 * True when some node of root `id`'s tree waits on a human decision (docs/guides/approvals-and-budgets.md):
 * the root itself, or a node listed in its owner's pending approvals (each node's id starts with
 * its root's).
 */
export async function awaitsDecision(
  redis: MeshRedis,
  keys: KeyLayout,
  id: string,
  owner: string | undefined,
): Promise<boolean> {
  const own = await redis.hget(keys.invocation(id, id), 'approvalsPending');
  if (Number(own ?? 0) > 0) return true;
  const index = keys.approvalIndex(owner);
  let cursor = '0';
  // Bounded: the index holds at most INDEX_LIMIT entries (approval-store.ts), read in pages.
  do {
    const [next, found] = await redis.zscan(index, cursor, 'MATCH', `${id}-*`, 'COUNT', 1000);
    if (found.length > 0) return true;
    cursor = next;
  } while (cursor !== '0');
  return false;
}
