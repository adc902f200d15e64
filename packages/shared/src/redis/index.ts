// The one place the mesh makes Redis connections (docs/guides/deploying.md: one server or a cluster).
export { type ClusterNodeAddress, MAX_CLUSTER_NODES, parseClusterNodes } from './cluster-nodes.js';
export {
  type ConnectOptions,
  connectRedis,
  duplicateRedis,
  isRedisCluster,
  type MeshRedis,
} from './connect-redis.js';
export { keySlot } from './key-slot.js';
export { type LuaConstant, LuaLoader, type LuaScript } from './lua-loader.js';
export { isClusterTarget, type RedisTarget } from './redis-target.js';
