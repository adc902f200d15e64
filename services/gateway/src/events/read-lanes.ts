import { isRedisCluster, keySlot, type MeshRedis } from '@agentmesh/shared/redis';
import type { Cluster, Redis } from 'ioredis';

/**
 * Which server connection reads which stream key. An XREAD of several keys must go to one server,
 * and a cluster refuses one whose keys span slots (even slots of one node): so the event hub reads
 * in lanes, one per node, and within a lane by slot. On one server there is one lane and one
 * group, the reader connection itself. On a cluster a lane is a master node, read on the reader
 * client's own connection to that node (nothing else uses that client): one connection per master.
 */
export interface ReadLanes {
  /** The lane of a key (a node's `host:port` on a cluster; `undefined` while the slot map is unknown). */
  laneOf(key: string): string | undefined;
  /** The group of a key within its lane: keys one XREAD may read together (its slot on a cluster). */
  groupOf(key: string): number;
  /** The connection that blocks reading a lane, or undefined when its node is gone. */
  connectionOf(lane: string): Redis | undefined;
  /** CLIENT UNBLOCK on the lane's server (sent over the command connection to that server). */
  unblock(lane: string, clientId: number): Promise<number>;
  /** Asks for a fresh slot map (a read failed: the cluster may have changed). */
  refresh(): void;
}

const SINGLE = 'server';

/** The lanes of `reader` (a connection of its own), unblocked through `commands`. */
export function readLanes(reader: MeshRedis, commands: MeshRedis): ReadLanes {
  if (!isRedisCluster(reader)) {
    return {
      laneOf: () => SINGLE,
      groupOf: () => 0,
      connectionOf: () => reader,
      unblock: (_lane, id) => commands.client('UNBLOCK', id) as Promise<number>,
      refresh: () => undefined,
    };
  }
  const master = (cluster: Cluster, lane: string) =>
    cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === lane);
  return {
    laneOf: (key) => reader.slots[keySlot(key)]?.[0],
    groupOf: keySlot,
    connectionOf: (lane) => master(reader, lane),
    unblock: async (lane, id) => {
      const node = isRedisCluster(commands) ? master(commands, lane) : undefined;
      return node ? ((await node.client('UNBLOCK', id)) as number) : 0;
    },
    refresh: () => reader.refreshSlotsCache(),
  };
}
