import {
  type CodeAgentShape,
  DEFAULT_MAX_FORK_BYTES,
  DEFAULT_MAX_FORK_RECORDS,
  DEFAULT_SESSION_TTL_SECONDS,
  ErrorBodySchema,
  keyLayout,
  type MeshConfig,
  parseApiKeys,
  queueName,
} from '@agentmesh/shared';
import {
  type ClusterNodeAddress,
  connectRedis,
  isRedisCluster,
  meshScripts,
  readCatalogue,
  SessionStore,
} from '@agentmesh/shared/redis';
import { Queue } from 'bullmq';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { a2aRoutes } from './a2a/a2a-route.js';
import { EventHub } from './events/event-hub.js';
import { installTreeStreaming } from './events/tree-streaming.js';
import { ForkService } from './forks/fork-service.js';
import { publishDefinitions } from './forks/publish-definitions.js';
import { InvocationService } from './invocations/invocation-service.js';
import { Waiters } from './invocations/waiters.js';
import { mcpRoutes } from './mcp/mcp-route.js';
import { MeshState } from './mesh-state.js';
import { openAiRoutes } from './openai/openai-route.js';
import { treeStreamSource } from './openai/tree-source.js';
import { agentRoutes } from './routes/agents.js';
import { approvalRoutes } from './routes/approvals.js';
import { callRoutes } from './routes/calls.js';
import { eventRoutes } from './routes/events.js';
import { forkRoutes } from './routes/forks.js';
import { healthRoutes } from './routes/health.js';
import { invocationRoutes } from './routes/invocations.js';
import { sessionRoutes } from './routes/sessions.js';
import { installAuth } from './setup/auth.js';
import { registerConsole } from './setup/console.js';
import { registerDocs } from './setup/docs.js';
import { installErrorHandler } from './setup/error-handler.js';
import { clientErrorHandler, frameworkErrors, installFrameworkErrors } from './setup/framework-errors.js';
import { installJsonBody } from './setup/json-body.js';
import { installMetrics } from './setup/metrics.js';
import { installValidator } from './setup/validator.js';
import { httpSpans } from './tracing.js';

/** What the gateway is built from (see docs/guides/getting-started.md for the env vars main reads). */
export interface GatewayOptions {
  config: MeshConfig;
  codeAgents?: Record<string, CodeAgentShape>;
  redisUrl: string;
  /** A Redis Cluster's seed nodes (`REDIS_CLUSTER_NODES`): used instead of `redisUrl` when set. */
  redisClusterNodes?: readonly ClusterNodeAddress[] | undefined;
  prefix: string;
  /** The queue fast path (MESH_QUEUE_FASTPATH, default on): false adds jobs with stock BullMQ. */
  queueFastPath?: boolean;
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
}

// How often the gateway writes its agents' definitions again (each lives longer than this).
const DEFINITION_RENEW_SECONDS = 3600;

/** The gateway: a fastify app plus the connections it owns; `close()` ends both. */
export interface Gateway {
  app: FastifyInstance;
  mesh: MeshState;
  close(): Promise<void>;
}

/** Builds the gateway app; it serves at once and learns tools when the tool-host publishes them. */
export async function buildGateway(opts: GatewayOptions): Promise<Gateway> {
  const keys = keyLayout(opts.prefix);
  // Checked before anything connects: a bad MESH_API_KEYS stops the gateway at start.
  const apiKeys = parseApiKeys(opts.apiKeys, Object.keys(opts.config.agents));
  const mesh = new MeshState(opts.config, opts.codeAgents ?? {});
  const target = { url: opts.redisUrl, clusterNodes: opts.redisClusterNodes };
  const redis = connectRedis(target, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    lazyConnect: true,
  });
  const subscriber = connectRedis(target, { maxRetriesPerRequest: null, lazyConnect: true });
  // Every event stream of this gateway shares this one reader (one per master on a cluster, docs/reference/bounds.md).
  const streamReader = connectRedis(target, { maxRetriesPerRequest: null, lazyConnect: true });
  // ioredis reconnects by itself; an outage is logged here instead of as an unhandled event.
  const logger = opts.logger ?? pino({ enabled: false });
  for (const c of [redis, subscriber, streamReader])
    c.on('error', (e: Error) => logger.warn({ err: e.message }, 'redis connection error'));
  await Promise.all([redis.connect(), subscriber.connect(), streamReader.connect()]);
  const hub = new EventHub(streamReader, redis);
  hub.start();
  // With the queue fast path, on one server, a job the gateway adds goes straight to a runner's
  // worker blocked on its queue (shared queue/fast-path/dispatch.ts); defined before BullMQ's own
  // add, which then stands aside. Off, the module is not even loaded: BullMQ's add stands.
  if ((opts.queueFastPath ?? true) && !isRedisCluster(redis))
    (await import('@agentmesh/shared/queue/fast-path')).defineDispatchingAdd(redis);
  const queues = new Map(
    Object.keys(opts.config.agents).map((name) => [
      name,
      new Queue(queueName(name), { connection: redis, prefix: keys.bullPrefix }),
    ]),
  );
  const waiters = new Waiters(subscriber, keys.doneChannel());
  await waiters.start();
  const invocations = new InvocationService(
    redis,
    meshScripts(redis),
    keys,
    queues,
    waiters,
    opts.retentionSeconds,
    new SessionStore(redis, keys, opts.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS, {
      maxBytes: opts.sessionMaxBytes,
    }),
    () => mesh.plan,
  );

  const maxTimeoutSeconds = opts.maxTimeoutSeconds ?? 86_400;
  const forks = new ForkService(
    redis,
    meshScripts(redis),
    keys,
    invocations,
    () => mesh.plan,
    {
      maxRecords: opts.maxForkRecords ?? DEFAULT_MAX_FORK_RECORDS,
      maxBytes: opts.maxForkBytes ?? DEFAULT_MAX_FORK_BYTES,
      maxResultBytes: opts.maxResultBytes ?? 64 * 1024,
    },
    opts.retentionSeconds,
  );
  // Each agent's definition by its hash, for as long as an invocation made with it may be forked
  // (its deadline, then the retention), renewed well within that (docs/guides/durability.md).
  const definitionTtl = maxTimeoutSeconds + opts.retentionSeconds + DEFINITION_RENEW_SECONDS;
  const publish = () => {
    const plan = mesh.plan;
    if (plan) void publishDefinitions(redis, keys, plan, definitionTtl).catch(() => undefined);
  };
  const renew = setInterval(publish, DEFINITION_RENEW_SECONDS * 1000);
  renew.unref();
  const refresh = async () => {
    const catalogue = await readCatalogue(redis, keys).catch(() => undefined);
    if (catalogue) {
      const before = mesh.plan;
      mesh.apply(catalogue);
      if (mesh.plan !== before) publish();
    }
  };
  await refresh();
  subscriber.on('message', (channel: string) => {
    if (channel === keys.catalogueChannel())
      void refresh().catch((e: Error) => app.log.error({ err: e.message }, 'bad catalogue'));
  });
  await subscriber.subscribe(keys.catalogueChannel());
  // Until the first catalogue arrives, poll for it too (a publish may precede our subscription).
  const poll = setInterval(() => {
    if (mesh.plan) clearInterval(poll);
    else void refresh().catch((e: Error) => app.log.error({ err: e.message }, 'bad catalogue'));
  }, 500);

  const requestTimeoutMs = opts.requestTimeoutMs ?? 30_000;
  const headersTimeoutMs = opts.headersTimeoutMs ?? 10_000;
  const spans = httpSpans();
  const app = Fastify({
    loggerInstance: logger,
    logController: spans.logController, // fastify's request lines inside the request's span
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    requestTimeout: requestTimeoutMs,
    // Node looks for late headers and bodies this often (its default, 30 s, would let them linger).
    http: { connectionsCheckingInterval: Math.max(100, Math.min(1000, headersTimeoutMs / 2)) },
    clientErrorHandler,
    frameworkErrors,
  });
  spans.install(app); // first, so every other hook runs inside the request's span
  installFrameworkErrors(app, { headersTimeoutMs, requestTimeoutMs });
  installJsonBody(app);
  // Only application/json bodies are accepted (docs/reference/rest-api.md); fastify parses text/plain too by default.
  app.removeContentTypeParser('text/plain');
  installValidator(app);
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  app.addSchema({ $id: 'ErrorBody', ...ErrorBodySchema });
  // While closing, answers end their keep-alive connections, so close() need not wait them out.
  let closing = false;
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });
  // `ready` lags a dropped socket by a moment under load: a command then fails "Stream isn't
  // writeable" while the status still says ready, and that is Redis being unreachable too.
  installErrorHandler(
    app,
    () => redis.status === 'ready' && (isRedisCluster(redis) || redis.stream?.writable !== false),
  );
  installAuth(app, apiKeys);
  const registry = installMetrics(app, queues);
  await registerDocs(app, { auth: apiKeys !== undefined, publicUrl: opts.publicUrl });
  await registerConsole(app, { auth: apiKeys !== undefined, dir: opts.consoleDir });
  await app.register(healthRoutes, { redis, keys, mesh, registry });
  const streaming = installTreeStreaming(app, { redis, keys, hub, reader: invocations }, opts);
  await app.register(agentRoutes, {
    mesh,
    invocations,
    defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
    maxTimeoutSeconds,
    stream: streaming,
  });
  await app.register(invocationRoutes, { invocations, redis, keys });
  await app.register(callRoutes, { scripts: meshScripts(redis), keys, mesh });
  await app.register(forkRoutes, {
    forks,
    defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
    maxTimeoutSeconds,
  });
  await app.register(approvalRoutes, {
    redis,
    scripts: meshScripts(redis),
    keys,
    queues,
    view: (id) => invocations.view(id),
  });
  await app.register(sessionRoutes, { sessions: invocations.sessions!, invocations });
  await app.register(mcpRoutes, {
    mesh,
    invocations,
    redis,
    subscriber,
    keys,
    waitSeconds: opts.mcpWaitSeconds ?? 300,
    defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
    streaming,
  });
  await app.register(a2aRoutes, {
    mesh,
    slots: streaming.slots,
    streams: streaming.streams,
    watches: streaming.watches,
    invocations,
    hub,
    keys,
    auth: apiKeys !== undefined,
    publicUrl: opts.publicUrl,
    defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
  });
  await app.register(openAiRoutes, {
    prefix: '/v1',
    mesh,
    invocations,
    slots: streaming.slots,
    watches: streaming.watches,
    source: treeStreamSource(streaming.streams),
    defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
    ...(opts.heartbeatMs === undefined ? {} : { heartbeatMs: opts.heartbeatMs }),
  });
  await app.register(eventRoutes, { invocations, ...streaming });
  return {
    app,
    mesh,
    async close() {
      clearInterval(poll);
      clearInterval(renew);
      closing = true;
      waiters.releaseAll();
      await app.close();
      await Promise.all([...queues.values()].map((q) => q.close()));
      hub.close();
      subscriber.disconnect();
      redis.disconnect();
    },
  };
}
