import type { ClusterNodeAddress } from './cluster-nodes.js';

/**
 * Where the mesh's Redis is: one server by URL, or a cluster by its seed nodes. The nodes win when
 * given (`REDIS_CLUSTER_NODES` takes precedence over `REDIS_URL`, docs/guides/deploying.md).
 */
export interface RedisTarget {
  url: string;
  clusterNodes?: readonly ClusterNodeAddress[] | undefined;
}

/** True when the target is a cluster. */
export function isClusterTarget(target: RedisTarget): boolean {
  return (target.clusterNodes?.length ?? 0) > 0;
}
