import {
  DEFAULT_DELTA_FLUSH_MS,
  DEFAULT_DELTA_RETENTION_SECONDS,
  DEFAULT_DRAIN_MS,
  DEFAULT_MAX_CALLS_PER_TURN,
  DEFAULT_MAX_FORK_BYTES,
  DEFAULT_MAX_FORK_RECORDS,
  DEFAULT_MAX_MODEL_REPLY_BYTES,
  DEFAULT_MAX_RESULT_BYTES,
  DEFAULT_MODEL_IDLE_SECONDS,
  DEFAULT_REMOTE_REQUEST_SECONDS,
  DEFAULT_RUNNER_CONCURRENCY,
  DEFAULT_SESSION_MAX_BYTES,
  DEFAULT_SESSION_TTL_SECONDS,
  DEFAULT_STREAM_BUFFER_BYTES,
} from './defaults.js';
import { MeshError } from './errors/mesh-error.js';
import { type ClusterNodeAddress, parseClusterNodes } from './redis/cluster-nodes.js';

/** The settings every service reads from its environment (docs/guides/getting-started.md), parsed and checked. */
export interface ServiceEnv {
  configFile: string;
  redisUrl: string;
  /** `REDIS_CLUSTER_NODES` (seed `host:port` list): a cluster, used instead of `REDIS_URL` when set. */
  redisClusterNodes: ClusterNodeAddress[] | undefined;
  prefix: string;
  /**
   * `MESH_QUEUE_FASTPATH` (`on`, the default, or `off`): the queue fast path of the runners; off,
   * they use BullMQ through its public API alone (the gateway always does).
   */
  queueFastPath: boolean;
  gatewayPort: number;
  toolHostPort: number;
  /** Overrides the config's `toolHost` when set. */
  toolHostUrl: string | undefined;
  /** Agents this runner hosts; undefined = all. */
  runnerAgents: string[] | undefined;
  runnerConcurrency: number;
  runnerMetricsPort: number;
  apiKeys: string | undefined;
  internalToken: string | undefined;
  retentionSeconds: number;
  defaultTimeoutSeconds: number;
  maxDepth: number;
  maxDelegationsPerTurn: number;
  maxResultBytes: number;
  /** BullMQ lock duration: a SIGKILLed runner's jobs move on after about this long. */
  lockDurationMs: number;
  /** Crashes one invocation survives; past them it fails with too_many_recoveries. */
  maxRecoveries: number;
  /** On SIGTERM, how long a runner lets the jobs it holds finish before requeueing them. */
  drainMs: number;
  logLevel: string;
  /** `LOG_FORMAT` as given (`json` or `pretty`); unset, the service decides by its terminal. */
  logFormat: string | undefined;
  /** The address services listen on (`HOST`, default loopback). */
  host: string;
  /** `MESH_ALLOW_ANONYMOUS=true` (that value only): a non-loopback listener without a secret is intended. */
  allowAnonymous: boolean;
  /** Bounds on hostile input (docs/reference/bounds.md). */
  maxTimeoutSeconds: number;
  maxModelReplyBytes: number;
  maxCallsPerTurn: number;
  maxStreamsPerKey: number;
  maxStreams: number;
  /** Bytes one client's event stream may hold in the gateway (MESH_STREAM_BUFFER_BYTES, docs/reference/bounds.md). */
  streamBufferBytes: number;
  /** The call records (count and bytes) of an invocation a fork may read (docs/guides/durability.md). */
  maxForkRecords: number;
  maxForkBytes: number;
  /** How long `POST /mcp`'s tools/call waits for the agent's answer (MESH_MCP_WAIT_SECONDS, docs/guides/mcp.md). */
  mcpWaitSeconds: number;
  /** The base URL clients reach the gateway at (MESH_PUBLIC_URL): A2A cards and the document's servers. */
  publicUrl: string | undefined;
  /** How long a session lives after its last use (MESH_SESSION_TTL_SECONDS, docs/guides/sessions.md). */
  sessionTtlSeconds: number;
  /** Bytes of a session's stored messages (MESH_SESSION_MAX_BYTES, docs/guides/sessions.md, docs/reference/bounds.md). */
  sessionMaxBytes: number;
  /** How long one request to a remote A2A agent may take (MESH_REMOTE_REQUEST_SECONDS, docs/reference/bounds.md). */
  remoteRequestSeconds: number;
  /** Tools one mounted MCP server may list (MESH_MCP_MAX_TOOLS, docs/reference/bounds.md). */
  mcpMaxTools: number;
  /** How long a model request may receive nothing (MESH_MODEL_IDLE_SECONDS, docs/reference/bounds.md). */
  modelIdleSeconds: number;
  /** How long a model call's unsent text waits to go out as a delta (MESH_DELTA_FLUSH_MS, docs/guides/streaming.md). */
  deltaFlushMs: number;
  /** How long a tree's deltas are kept after the last (MESH_DELTA_RETENTION_SECONDS). */
  deltaRetentionSeconds: number;
}

/** Parses the environment; every bad value is reported at once with its variable name. */
export function serviceEnv(env: Record<string, string | undefined>): ServiceEnv {
  const problems: { path: string; message: string }[] = [];
  const int = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < min) {
      problems.push({ path: name, message: `must be an integer ≥ ${min}, got "${raw}"` });
      return fallback;
    }
    return n;
  };
  const str = (name: string): string | undefined => (env[name] === '' ? undefined : env[name]);
  const onOff = (name: string, fallback: boolean): boolean => {
    const raw = str(name);
    if (raw === undefined) return fallback;
    if (raw === 'on' || raw === 'off') return raw === 'on';
    problems.push({ path: name, message: `must be "on" or "off", got "${raw}"` });
    return fallback;
  };
  const clusterNodes = (name: string): ClusterNodeAddress[] | undefined => {
    const raw = str(name);
    if (raw === undefined) return undefined;
    const parsed = parseClusterNodes(raw);
    if ('nodes' in parsed) return parsed.nodes;
    problems.push({ path: name, message: parsed.problem });
    return undefined;
  };
  const settings: ServiceEnv = {
    configFile: str('MESH_CONFIG') ?? './mesh.yaml',
    redisUrl: str('REDIS_URL') ?? 'redis://127.0.0.1:6379',
    redisClusterNodes: clusterNodes('REDIS_CLUSTER_NODES'),
    prefix: str('MESH_PREFIX') ?? 'mesh',
    queueFastPath: onOff('MESH_QUEUE_FASTPATH', true),
    gatewayPort: int('GATEWAY_PORT', 3000, 0),
    toolHostPort: int('TOOL_HOST_PORT', 3002, 0),
    toolHostUrl: str('TOOL_HOST_URL'),
    runnerAgents: str('RUNNER_AGENTS')
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    runnerConcurrency: int('RUNNER_CONCURRENCY', DEFAULT_RUNNER_CONCURRENCY, 1),
    runnerMetricsPort: int('RUNNER_METRICS_PORT', 0, 0),
    apiKeys: str('MESH_API_KEYS'),
    internalToken: str('MESH_INTERNAL_TOKEN'),
    retentionSeconds: int('MESH_RETENTION_SECONDS', 7 * 24 * 3600, 1),
    defaultTimeoutSeconds: int('MESH_DEFAULT_TIMEOUT_SECONDS', 600, 1),
    maxDepth: int('MESH_MAX_DEPTH', 8, 0),
    maxDelegationsPerTurn: int('MESH_MAX_DELEGATIONS_PER_TURN', 16, 0),
    maxResultBytes: int('MESH_MAX_RESULT_BYTES', DEFAULT_MAX_RESULT_BYTES, 256),
    lockDurationMs: int('RUNNER_LOCK_MS', 3000, 500),
    drainMs: int('RUNNER_DRAIN_MS', DEFAULT_DRAIN_MS, 0),
    maxRecoveries: int('MESH_MAX_RECOVERIES', 5, 0),
    logLevel: str('LOG_LEVEL') ?? 'info',
    logFormat: str('LOG_FORMAT'),
    host: str('HOST') ?? '127.0.0.1',
    allowAnonymous: env.MESH_ALLOW_ANONYMOUS === 'true',
    maxTimeoutSeconds: int('MESH_MAX_TIMEOUT_SECONDS', 86_400, 1),
    maxModelReplyBytes: int('MESH_MAX_MODEL_REPLY_BYTES', DEFAULT_MAX_MODEL_REPLY_BYTES, 1024),
    maxCallsPerTurn: int('MESH_MAX_CALLS_PER_TURN', DEFAULT_MAX_CALLS_PER_TURN, 1),
    maxStreamsPerKey: int('MESH_MAX_STREAMS_PER_KEY', 32, 1),
    maxStreams: int('MESH_MAX_STREAMS', 1024, 1),
    streamBufferBytes: int('MESH_STREAM_BUFFER_BYTES', DEFAULT_STREAM_BUFFER_BYTES, 16 * 1024),
    maxForkRecords: int('MESH_MAX_FORK_RECORDS', DEFAULT_MAX_FORK_RECORDS, 1),
    maxForkBytes: int('MESH_MAX_FORK_BYTES', DEFAULT_MAX_FORK_BYTES, 1024),
    mcpWaitSeconds: int('MESH_MCP_WAIT_SECONDS', 300, 1),
    publicUrl: str('MESH_PUBLIC_URL'),
    sessionTtlSeconds: int('MESH_SESSION_TTL_SECONDS', DEFAULT_SESSION_TTL_SECONDS, 1),
    sessionMaxBytes: int('MESH_SESSION_MAX_BYTES', DEFAULT_SESSION_MAX_BYTES, 4096),
    remoteRequestSeconds: int('MESH_REMOTE_REQUEST_SECONDS', DEFAULT_REMOTE_REQUEST_SECONDS, 1),
    mcpMaxTools: int('MESH_MCP_MAX_TOOLS', 1000, 1),
    modelIdleSeconds: int('MESH_MODEL_IDLE_SECONDS', DEFAULT_MODEL_IDLE_SECONDS, 1),
    deltaFlushMs: int('MESH_DELTA_FLUSH_MS', DEFAULT_DELTA_FLUSH_MS, 0),
    deltaRetentionSeconds: int('MESH_DELTA_RETENTION_SECONDS', DEFAULT_DELTA_RETENTION_SECONDS, 1),
  };
  if (settings.defaultTimeoutSeconds > settings.maxTimeoutSeconds) {
    problems.push({
      path: 'MESH_DEFAULT_TIMEOUT_SECONDS',
      message: `must not exceed MESH_MAX_TIMEOUT_SECONDS (${settings.maxTimeoutSeconds})`,
    });
  }
  if (!/^[A-Za-z0-9_-]+$/.test(settings.prefix)) {
    problems.push({ path: 'MESH_PREFIX', message: 'may hold only letters, digits, _ and -' });
  }
  if (problems.length > 0) {
    const lines = problems.map((p) => `${p.path}: ${p.message}`).join('\n');
    throw new MeshError('invalid_config', `Invalid environment:\n${lines}`, problems);
  }
  return settings;
}
