import {
  arrivalCheckMs,
  clientErrorHandler,
  DEFAULT_ARRIVAL,
  DEFAULT_MAX_FORK_BYTES,
  DEFAULT_MAX_FORK_RECORDS,
  DEFAULT_SESSION_TTL_SECONDS,
  ErrorBodySchema,
  keyLayout,
  parseApiKeys,
  queueName,
} from '@agentmesh/shared';
import { connectRedis, isRedisCluster, meshScripts, SessionStore } from '@agentmesh/shared/redis';
import { Queue } from 'bullmq';
import Fastify, { type FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { EventHub } from './events/event-hub.js';
import { ForkService } from './forks/fork-service.js';
import type { GatewayOptions } from './gateway-options.js';
import { InvocationService } from './invocations/invocation-service.js';
import { Waiters } from './invocations/waiters.js';
import { MeshState } from './mesh-state.js';
import { installAuth } from './setup/auth.js';
import { syncCatalogue } from './setup/catalogue-sync.js';
import { closeConnectionsOnEnd } from './setup/close-connections.js';
import { registerConsole } from './setup/console.js';
import { registerDocs } from './setup/docs.js';
import { installErrorHandler } from './setup/error-handler.js';
import { frameworkErrors, installFrameworkErrors } from './setup/framework-errors.js';
import { installJsonBody } from './setup/json-body.js';
import { installMetrics } from './setup/metrics.js';
import { registerRoutes } from './setup/routes.js';
import { installValidator } from './setup/validator.js';
import { httpSpans } from './tracing.js';

export type { GatewayOptions } from './gateway-options.js';

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
  const catalogue = await syncCatalogue({
    redis,
    subscriber,
    keys,
    mesh,
    maxTimeoutSeconds,
    retentionSeconds: opts.retentionSeconds,
    log: () => app.log,
  });

  const requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_ARRIVAL.requestTimeoutMs;
  const headersTimeoutMs = opts.headersTimeoutMs ?? DEFAULT_ARRIVAL.headersTimeoutMs;
  const spans = httpSpans();
  const app = Fastify({
    loggerInstance: logger,
    logController: spans.logController, // fastify's request lines inside the request's span
    bodyLimit: opts.bodyLimit ?? 1024 * 1024,
    requestTimeout: requestTimeoutMs,
    http: { connectionsCheckingInterval: arrivalCheckMs({ headersTimeoutMs, requestTimeoutMs }) },
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
  // While closing, answers end their keep-alive connections, so close() need not wait them out;
  // those already open then (streams) drop theirs as they end (close-connections.ts).
  let closing = false;
  closeConnectionsOnEnd(app);
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
  const registry = installMetrics(app, queues, {
    cacheMs: opts.queueCountsCacheMs,
    timeoutMs: opts.queueCountsTimeoutMs,
  });
  await registerDocs(app, { auth: apiKeys !== undefined, publicUrl: opts.publicUrl });
  await registerConsole(app, { auth: apiKeys !== undefined, dir: opts.consoleDir });
  await registerRoutes(
    app,
    {
      redis,
      subscriber,
      keys,
      mesh,
      hub,
      queues,
      invocations,
      forks,
      registry,
      auth: apiKeys !== undefined,
      maxTimeoutSeconds,
    },
    opts,
  );
  return {
    app,
    mesh,
    async close() {
      catalogue.close();
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
