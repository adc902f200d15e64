// The options buildGateway (app.ts) takes; main.ts fills them from the environment.
import type { CodeAgentShape, MeshConfig } from '@agentmesh/shared';
import type { ClusterNodeAddress } from '@agentmesh/shared/redis';
import type { FastifyBaseLogger } from 'fastify';

/** What the gateway is built from (see docs/guides/getting-started.md for the env vars main reads). */
export interface GatewayOptions {
  config: MeshConfig;
  codeAgents?: Record<string, CodeAgentShape>;
  redisUrl: string;
  /** A Redis Cluster's seed nodes (`REDIS_CLUSTER_NODES`): used instead of `redisUrl` when set. */
  redisClusterNodes?: readonly ClusterNodeAddress[] | undefined;
  prefix: string;
  defaultTimeoutSeconds: number;
  retentionSeconds: number;
  bodyLimit?: number;
  /** `MESH_API_KEYS` as written (`key` or `key=agent1|agent2`, comma-separated); unset = auth off. */
  apiKeys?: string | undefined;
  /** A pino logger; silent when absent. */
  logger?: FastifyBaseLogger;
  /** The largest `?timeout` in seconds (MESH_MAX_TIMEOUT_SECONDS, default 86400). */
  maxTimeoutSeconds?: number;
  /** Open event streams per API key, callers without a key counting as one (default 32). */
  maxStreamsPerKey?: number;
  /** Open event streams per gateway (default 1024). */
  maxStreams?: number;
  /** How long a request's headers, and the whole request, may take to arrive (default 10 s, 30 s). */
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** How often an idle event stream sends a heartbeat (default 15 s). */
  heartbeatMs?: number;
  /** The base URL clients reach the gateway at, for the document's `servers` (else the request's Host). */
  publicUrl?: string;
  /** How long `POST /mcp`'s tools/call waits for the agent (MESH_MCP_WAIT_SECONDS, default 300 s). */
  mcpWaitSeconds?: number;
  /** The console's built files (docs/guides/console.md), served at /ui; default the @agentmesh/console build. */
  consoleDir?: string;
  /** How long a session lives after its last use (MESH_SESSION_TTL_SECONDS, default 30 days). */
  sessionTtlSeconds?: number;
  /** The call records (count, bytes) of an invocation a fork may read (MESH_MAX_FORK_RECORDS, MESH_MAX_FORK_BYTES). */
  maxForkRecords?: number;
  maxForkBytes?: number;
  /** Bytes of a result given to a fork before it is cut with a marker (MESH_MAX_RESULT_BYTES, default 64 KiB). */
  maxResultBytes?: number;
  /** Bytes of a session's stored messages (MESH_SESSION_MAX_BYTES; default 1 MiB). */
  sessionMaxBytes?: number;
  /** Bytes one client's event stream may hold in the gateway (MESH_STREAM_BUFFER_BYTES; default 1 MiB). */
  streamBufferBytes?: number;
  /** How long a structural event waits for a slow delta client before it is disconnected (default 30 s). */
  slowClientMs?: number;
  /** A tree's watch flag: its TTL and how often open delta streams refresh it (default 30 s, 10 s). */
  watchTtlMs?: number;
  watchRefreshMs?: number;
  /** How long one reading of the queues serves `/metrics` scrapes, and how long a scrape waits for it (default 1 s, 2 s). */
  queueCountsCacheMs?: number;
  queueCountsTimeoutMs?: number;
}
