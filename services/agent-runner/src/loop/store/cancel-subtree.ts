import type { KeyLayout } from '@agentmesh/shared';
import { cancelTree, type FlaggedNode, type MeshRedis, type MeshScripts } from '@agentmesh/shared/redis';

/**
 * Flags invocation `id` and its whole subtree cancelled, as `DELETE` does (never its ancestors; for
 * `error`, see cancelTree), and broadcasts the flagged ids on the cancel channel, so runners and
 * tool-hosts abort their calls in flight. Returns the nodes that were not terminal.
 */
export async function cancelSubtree(
  redis: MeshRedis,
  scripts: MeshScripts,
  keys: KeyLayout,
  id: string,
  error?: string,
): Promise<FlaggedNode[]> {
  const flagged = await cancelTree(scripts, keys, id, error);
  const p = redis.pipeline();
  for (const node of flagged) p.publish(keys.cancelChannel(), node.id);
  await p.exec();
  return flagged;
}
