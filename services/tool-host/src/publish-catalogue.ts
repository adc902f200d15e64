import type { KeyLayout, ToolInfo } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';

/** Publishes the tool catalogue to Redis with a new version, and tells subscribers it changed. */
export async function publishCatalogue(
  redis: MeshRedis,
  keys: KeyLayout,
  tools: ToolInfo[],
): Promise<number> {
  const version = Date.now();
  await redis
    .multi()
    .hset(keys.catalogue(), 'version', String(version), 'tools', JSON.stringify(tools))
    .publish(keys.catalogueChannel(), String(version))
    .exec();
  return version;
}
