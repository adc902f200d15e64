import { type KeyLayout, queueName } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import { Queue } from 'bullmq';

/**
 * The BullMQ queue of every agent of the plan, by agent name (children go to theirs), on a
 * connection of their own: BullMQ defines its fifty-odd steps on the one it is given, and ioredis
 * copies every step defined on a connection into each of its pipelines, so the store's pipelines
 * (a delegation's submission) stay cheap on a connection with the mesh's only.
 */
export function agentQueues(
  agents: readonly string[],
  connection: MeshRedis,
  keys: KeyLayout,
): Map<string, Queue> {
  return new Map(
    agents.map((name) => [name, new Queue(queueName(name), { connection, prefix: keys.bullPrefix })]),
  );
}
