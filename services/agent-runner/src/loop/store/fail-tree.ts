import { codedError, type KeyLayout, MeshError } from '@agentmesh/shared';
import type { MeshRedis, MeshScripts } from '@agentmesh/shared/redis';
import type { Activation } from './activation.js';
import { cancelSubtree } from './cancel-subtree.js';

/**
 * The tree's token budget is spent (docs/guides/approvals-and-budgets.md): fails the root with `budget_exceeded` and
 * cancels every node still running, as `DELETE` does (CANCEL_TREE, then the cancel broadcast).
 * Throws MeshError('cancelled'): the activation that found it ends like the rest of the tree.
 */
export async function failTree(
  redis: MeshRedis,
  scripts: MeshScripts,
  keys: KeyLayout,
  activation: Activation,
): Promise<never> {
  const s = activation.state;
  const error = codedError('budget_exceeded', { limit: s.budget ?? 0 });
  await cancelSubtree(redis, scripts, keys, s.rootId, JSON.stringify(error));
  throw new MeshError('cancelled', error.message);
}
