import os from 'node:os';
import {
  ConfigError,
  DEFAULT_DELTA_FLUSH_MS,
  DEFAULT_DELTA_RETENTION_SECONDS,
  DEFAULT_DRAIN_MS,
  DEFAULT_SESSION_TTL_SECONDS,
  keyLayout,
  type LoadedCodeAgent,
  type Logger,
  type MeshConfig,
  type MeshPlan,
  type ModelConfig,
  planFromCatalogue,
  rootOf,
  runnerClientName,
  type ToolInfo,
} from '@agentmesh/shared';
import {
  type ClusterNodeAddress,
  connectRedis,
  isRedisCluster,
  meshScripts,
  SessionStore,
  waitForCatalogue,
} from '@agentmesh/shared/redis';
import { Agent } from 'undici';
import { CancelListener } from '../loop/cancel-listener.js';
import { DeltaOutlet, type DeltaSettings } from '../loop/deltas/delta-outlet.js';
import { type RunnerMetrics, runnerMetrics } from '../loop/metrics.js';
import type { ChatModel } from '../loop/model/chat-model.js';
import { RemoteAgents } from '../loop/remote/remote-agents.js';
import {
  type RunnerContext,
  type RunnerLimitsOptions,
  withDefaultLimits,
} from '../loop/steps/runner-context.js';
import { ActivationStore } from '../loop/store/activation-store.js';
import { ToolClient } from '../loop/tools/tool-client.js';
import { agentQueues } from '../queue/agent-queues.js';
import { stalledCheckSettings, startAgentWorker } from '../queue/agent-worker.js';
import { endRecentFailedJobs } from '../queue/end-failed-job.js';
import type { RunnerFastPath } from '../queue/fast-path/index.js';
import { Slots } from '../queue/slots.js';
import { startWatchdog } from '../queue/watchdog.js';
import { buildModels } from './build-models.js';
import { drainWorkers } from './drain-workers.js';
import { startHeartbeat } from './heartbeat.js';
import { closeMetricsServer, serveMetrics } from './metrics-server.js';
import { runnerReadiness } from './runner-readiness.js';

/** What a runner process is built from: config, connections and settings (see docs/guides/getting-started.md). */
export interface RunnerOptions {
  config: MeshConfig;
  redisUrl: string;
  /** A Redis Cluster's seed nodes (`REDIS_CLUSTER_NODES`): used instead of `redisUrl` when set. */
  redisClusterNodes?: readonly ClusterNodeAddress[] | undefined;
  prefix: string;
  toolHostUrl: string;
  /** Agents hosted by this runner; undefined = all. */
  agents?: string[] | undefined;
  concurrency: number;
  internalToken?: string | undefined;
  retentionSeconds: number;
  /** How long a session lives after its last use (MESH_SESSION_TTL_SECONDS). */
  sessionTtlSeconds?: number;
  /** Bytes of a session's stored messages (MESH_SESSION_MAX_BYTES; default 1 MiB). */
  sessionMaxBytes?: number;
  limits: RunnerLimitsOptions;
  lockDurationMs: number;
  metricsPort: number;
  /** The address `/metrics`, `/healthz` and `/readyz` listen on (`HOST`; default loopback). */
  metricsHost?: string | undefined;
  log: Logger;
  /** Code agents' modules (loadCodeAgents), by agent name. */
  codeAgents?: Record<string, LoadedCodeAgent>;
  /** The parked-parent watchdog: how often it sweeps and how long a parent must have been parked. */
  watchdog?: { intervalMs: number; minParkedMs: number };
  /** How long close() lets the jobs it holds finish before requeueing them (default 30 s). */
  drainMs?: number;
  /** How deltas are published (MESH_DELTA_FLUSH_MS, MESH_DELTA_RETENTION_SECONDS); defaults 25 ms, 300 s. */
  deltas?: Partial<DeltaSettings>;
  /** Builds the client of a config model entry; the OpenAI-compatible client by default. */
  modelFactory?: (config: ModelConfig) => ChatModel;
  /**
   * The queue fast path (MESH_QUEUE_FASTPATH, default on; one Redis server only): false runs stock
   * BullMQ through its public API alone (docs/architecture/queue-fast-path.md).
   */
  queueFastPath?: boolean;
  /**
   * Ends the start while it waits for the tool-host's catalogue, before any job is taken: buildRunner
   * then rejects with the signal's reason (a SIGTERM during start-up, main.ts).
   */
  signal?: AbortSignal;
}

/** A runner: BullMQ workers for its agents, heartbeats for readiness, and its metrics. */
export interface Runner {
  readonly id: string;
  readonly plan: MeshPlan;
  readonly metricsPort: number | undefined;
  readonly metrics: RunnerMetrics;
  /** Stops taking jobs, finishes what it holds, and closes its connections. */
  close(): Promise<void>;
}

/** Starts a runner: waits for the tool catalogue, builds the plan, then serves its agents' queues. */
export async function buildRunner(opts: RunnerOptions): Promise<Runner> {
  const keys = keyLayout(opts.prefix);
  const target = { url: opts.redisUrl, clusterNodes: opts.redisClusterNodes };
  const id = `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  // Every command connection bears the runner's name: one left open says the runner lives (gone-runners.ts).
  const connectionName = runnerClientName(keys, id);
  const redis = connectRedis(target, { maxRetriesPerRequest: null, connectionName });
  redis.on('error', (e: Error) => opts.log.warn({ err: e.message }, 'redis connection error'));
  const catalogue = await waitForCatalogue(redis, keys, {
    onWait: () => opts.log.info({}, 'waiting for the tool-host to publish its catalogue'),
    ...(opts.signal ? { signal: opts.signal } : {}),
  }).catch((e: unknown) => {
    redis.disconnect();
    throw e;
  });
  const plan = planFromCatalogue(opts.config, catalogue.tools, opts.codeAgents);
  const hosted = opts.agents ?? Object.keys(plan.agents);
  for (const name of hosted) {
    if (!plan.agents[name]) {
      throw new ConfigError([{ file: 'RUNNER_AGENTS', path: name, message: `unknown agent "${name}"` }]);
    }
  }
  const metrics = runnerMetrics();
  const limits = withDefaultLimits(opts.limits);
  // Connections per origin (a model's, the tool-host's): one model call per slot in flight, so the
  // pool never caps a runner below its slots; a model's maxConcurrency is the limit that protects it.
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: Math.max(256, opts.concurrency) });
  const models = buildModels(opts.config, {
    redis,
    keys,
    dispatcher,
    maxModelReplyBytes: limits.maxModelReplyBytes,
    modelIdleMs: limits.modelIdleMs,
    modelRetryMs: limits.modelRetryMs,
    modelFactory: opts.modelFactory,
  });
  // The queues have a connection of their own (agent-queues.ts says why).
  const queueRedis = connectRedis(target, { maxRetriesPerRequest: null, connectionName });
  queueRedis.on('error', (e: Error) => opts.log.warn({ err: e.message }, 'redis connection error'));
  const queues = agentQueues(Object.keys(plan.agents), queueRedis, keys);
  // Loaded only when on, and on one server: a cluster's queues live apart from the trees.
  const fastPath: RunnerFastPath | undefined =
    (opts.queueFastPath ?? true) && !isRedisCluster(redis)
      ? (await import('../queue/fast-path/index.js')).runnerFastPath(redis)
      : undefined;
  const tools = new Map<string, ToolInfo>(catalogue.tools.map((t) => [t.name, t]));
  const ctx: RunnerContext = {
    runnerId: id,
    plan,
    codeAgents: opts.codeAgents ?? {},
    store: new ActivationStore(redis, meshScripts(redis), keys, opts.retentionSeconds),
    queues,
    models,
    deltas: new DeltaOutlet(
      redis,
      keys,
      {
        flushMs: opts.deltas?.flushMs ?? DEFAULT_DELTA_FLUSH_MS,
        retentionSeconds: opts.deltas?.retentionSeconds ?? DEFAULT_DELTA_RETENTION_SECONDS,
      },
      opts.log,
    ),
    catalogue: () => tools,
    tools: new ToolClient(opts.toolHostUrl, opts.internalToken, dispatcher),
    limits,
    retentionSeconds: opts.retentionSeconds,
    remote: RemoteAgents.fromConfig(opts.config, limits.remoteRequestMs, limits.remoteWatchMs),
    sessions: new SessionStore(redis, keys, opts.sessionTtlSeconds ?? DEFAULT_SESSION_TTL_SECONDS, {
      maxBytes: opts.sessionMaxBytes,
    }),
    metrics,
    log: opts.log,
  };
  if (fastPath) {
    const deps = { store: ctx.store, queues };
    ctx.submitWithJobs = (sub) => fastPath.submitWithJobs(deps, sub);
  }

  const cancels = new CancelListener(target, opts.log);
  await cancels.start(keys);
  await ctx.remote?.startWatching(target, keys, opts.log);
  const settings = {
    redis: target,
    keys,
    concurrency: opts.concurrency,
    lockDurationMs: opts.lockDurationMs,
    maxRecoveries: opts.limits.maxRecoveries,
    slots: new Slots(opts.concurrency),
    inFlight: cancels.inFlight,
    fastPath: fastPath?.worker,
    connectionName,
  };
  const workers = new Map(hosted.map((name) => [name, startAgentWorker(name, ctx, settings)]));
  for (const w of workers.values()) w.on('error', (e) => opts.log.error({ err: e.message }, 'worker error'));
  const heartbeat = await startHeartbeat(redis, keys, hosted, id, opts.log);
  // A runner that dies has its jobs moved on within about a second, not when their locks lapse.
  // Without the fast path, a dead runner's jobs move on when their locks lapse (BullMQ's check).
  const goneRunners = fastPath?.watchGoneRunners({
    redis: target,
    keys,
    runnerId: id,
    queues,
    stalled: stalledCheckSettings(settings),
    settleMs: 3000,
    log: opts.log,
    onReclaimed: (jobs) => metrics.reclaimedJobs.inc(jobs),
  });
  goneRunners?.start();
  const stopWatchdog = startWatchdog(
    redis,
    hosted.map((name) => queues.get(name)!),
    {
      intervalMs: 5_000,
      minParkedMs: 10_000,
      ...opts.watchdog,
      lockKey: keys.watchdogLock(),
      invocationKey: (invocationId) => keys.invocation(rootOf(invocationId), invocationId),
      endFailed: (queue) => endRecentFailedJobs(ctx, queue),
    },
    opts.log,
  );
  const server =
    opts.metricsPort > 0
      ? await serveMetrics(
          metrics.registry,
          () => runnerReadiness(workers, redis),
          opts.metricsPort,
          opts.metricsHost,
        )
      : undefined;
  opts.log.info({ runner: id, agents: hosted, concurrency: opts.concurrency }, 'runner ready');
  let closing: Promise<void> | undefined;
  return {
    id,
    plan,
    metrics,
    metricsPort: server ? (server.address() as { port: number }).port : undefined,
    // A second close (a test's teardown after a drain) waits for the first instead of failing.
    close() {
      closing ??= closeOnce();
      return closing;
    },
  };

  async function closeOnce(): Promise<void> {
    heartbeat.stop();
    stopWatchdog();
    await goneRunners?.stop();
    const draining = drainWorkers([...workers.values()], cancels.inFlight, opts.drainMs ?? DEFAULT_DRAIN_MS);
    const drained = await draining;
    if (!drained) {
      opts.log.warn(
        { runner: id },
        'workers did not close after the drain; the jobs they hold go back to their queues once this runner has exited',
      );
    }
    await heartbeat.withdraw(drained);
    await Promise.all([...queues.values()].map((q) => q.close()));
    queueRedis.disconnect();
    if (server) await closeMetricsServer(server);
    await dispatcher.close();
    cancels.close();
    ctx.remote?.close();
    redis.disconnect();
  }
}
