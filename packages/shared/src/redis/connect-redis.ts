import { Cluster, Redis } from 'ioredis';
import { isClusterTarget, type RedisTarget } from './redis-target.js';

/**
 * A mesh connection: a single-node client or a cluster client. Both expose the same commands; a
 * caller needing one server's connection (CLIENT ID, blocking reads) checks `isRedisCluster`.
 */
export type MeshRedis = Redis | Cluster;

/** The connection settings services choose per role (commands, subscriber, blocking reader). */
export interface ConnectOptions {
  /** null = retry a command until the connection is back (workers, subscribers). */
  maxRetriesPerRequest?: number | null;
  enableOfflineQueue?: boolean;
  lazyConnect?: boolean;
  /** CLIENT SETNAME on every (re)connect (a runner's connections bear its name: agent-runner's gone-runners.ts). */
  connectionName?: string;
}

/**
 * Every Redis connection of the mesh is made here: `new Redis(url)` for one server, an ioredis
 * `Cluster` over the seed nodes for a cluster. Not connected yet when `lazyConnect` is set.
 */
export function connectRedis(target: RedisTarget, options: ConnectOptions = {}): MeshRedis {
  if (!isClusterTarget(target)) return new Redis(target.url, options);
  const { maxRetriesPerRequest, enableOfflineQueue, lazyConnect, connectionName } = options;
  return new Cluster(
    target.clusterNodes!.map((n) => ({ host: n.host, port: n.port })),
    {
      ...(enableOfflineQueue === undefined ? {} : { enableOfflineQueue }),
      ...(lazyConnect === undefined ? {} : { lazyConnect }),
      redisOptions: {
        ...(maxRetriesPerRequest === undefined ? {} : { maxRetriesPerRequest }),
        ...(connectionName === undefined ? {} : { connectionName }),
      },
      // Reads go to masters: a Lua step's writes and the reads after it must see the same data.
      scaleReads: 'master',
    },
  );
}

/** True for a cluster client. */
export function isRedisCluster(redis: MeshRedis): redis is Cluster {
  return (redis as { isCluster?: boolean }).isCluster === true;
}

/** A new connection to the same server or cluster, with the same options (e.g. for subscribing). */
export function duplicateRedis(redis: MeshRedis): MeshRedis {
  return isRedisCluster(redis) ? redis.duplicate() : redis.duplicate();
}
