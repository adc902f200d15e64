/** One seed node of a Redis Cluster (`REDIS_CLUSTER_NODES`). */
export interface ClusterNodeAddress {
  host: string;
  port: number;
}

/** How many seed nodes `REDIS_CLUSTER_NODES` may list: a client needs a few, never hundreds. */
export const MAX_CLUSTER_NODES = 64;

/**
 * Parses `host:port,host:port,…` (an IPv6 host in brackets, `[::1]:7000`). Returns the nodes, or
 * the reason the text is not such a list, as data: the caller reports it with its variable name.
 */
export function parseClusterNodes(text: string): { nodes: ClusterNodeAddress[] } | { problem: string } {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) return { problem: 'must list at least one host:port' };
  if (items.length > MAX_CLUSTER_NODES) return { problem: `may list at most ${MAX_CLUSTER_NODES} nodes` };
  const nodes: ClusterNodeAddress[] = [];
  for (const item of items) {
    const m = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(item);
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65_535) return { problem: `"${item.slice(0, 100)}" is not host:port` };
    nodes.push({ host: m[1]!.replace(/^\[|\]$/g, ''), port });
  }
  return { nodes };
}
