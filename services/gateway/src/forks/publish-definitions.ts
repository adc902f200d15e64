import { canonicalJson, definitionOf, type KeyLayout, type MeshPlan } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

/**
 * Stores each agent's definition under its hash (keys.definition), so a fork refused with
 * `plan_changed` names what changed since its original ran (docs/guides/durability.md). Written when the plan is
 * built and again periodically, each time for `ttlSeconds`: as long as an invocation made with the
 * definition may still be forked. Sent together; each key has its own slot on a cluster.
 */
export async function publishDefinitions(
  redis: MeshRedis,
  keys: KeyLayout,
  plan: MeshPlan,
  ttlSeconds: number,
): Promise<void> {
  await Promise.all(
    Object.values(plan.agents).map((agent) =>
      redis.set(keys.definition(agent.definitionHash), canonicalJson(definitionOf(agent)), 'EX', ttlSeconds),
    ),
  );
}
