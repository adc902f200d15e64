import { setMaxListeners } from 'node:events';
import http from 'node:http';
import os from 'node:os';
import {
  buildPlan,
  ConfigError,
  checkToolReferences,
  keyLayout,
  type LoadedCodeAgent,
  type Logger,
  type MeshConfig,
  MeshError,
  type MeshPlan,
  type ModelConfig,
  meshScripts,
  queueName,
  rootOf,
  type ToolInfo,
  waitForCatalogue,
} from '@agentmesh/shared';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Agent } from 'undici';
import { HandBackError, settleJobError } from './job-errors.js';
import { type RunnerMetrics, runnerMetrics } from './metrics.js';
import type { ChatModel } from './model/chat-model.js';
import { ConcurrencyLimitedModel } from './model/concurrency-limited-model.js';
import { OpenAIChatModel } from './model/openai-chat-model.js';
import { redisOptions } from './redis-options.js';
import { Slots } from './slots.js';
import { runActivation } from './steps/run-activation.js';
import { type RunnerContext, type RunnerLimitsOptions, withDefaultLimits } from './steps/runner-context.js';
import { ActivationStore } from './store/activation-store.js';
import { ToolClient } from './tools/tool-client.js';
import { startWatchdog } from './watchdog.js';

/** What a runner process is built from: config, connections and settings (see DESIGN §10). */
export interface RunnerOptions {
  config: MeshConfig;
  redisUrl: string;
  prefix: string;
  toolHostUrl: string;
  /** Agents hosted by this runner; undefined = all. */
  agents?: string[] | undefined;
  concurrency: number;
  internalToken?: string | undefined;
  retentionSeconds: number;
  limits: RunnerLimitsOptions;
  lockDurationMs: number;
  metricsPort: number;
  log: Logger;
  /** Code agents' modules (loadCodeAgents), by agent name. */
  codeAgents?: Record<string, LoadedCodeAgent>;
  /** The parked-parent watchdog: how often it sweeps and how long a parent must have been parked. */
  watchdog?: { intervalMs: number; minParkedMs: number };
  /** How long close() lets jobs in hand finish before handing them back (default 30 s). */
  drainMs?: number;
  /** Builds the client of a config model entry; the OpenAI-compatible client by default. */
  modelFactory?: (config: ModelConfig) => ChatModel;
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

const HEARTBEAT_MS = 2000;

/** Starts a runner: waits for the tool catalogue, builds the plan, then serves its agents' queues. */
export async function buildRunner(opts: RunnerOptions): Promise<Runner> {
  const keys = keyLayout(opts.prefix);
  const redis = new Redis(opts.redisUrl, { maxRetriesPerRequest: null });
  redis.on('error', (e: Error) => opts.log.warn({ err: e.message }, 'redis connection error'));
  const id = `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const catalogue = await waitForCatalogue(redis, keys, {
    onWait: () => opts.log.info({}, 'waiting for the tool-host to publish its catalogue'),
  });
  const problems = checkToolReferences(
    opts.config,
    catalogue.tools.map((t) => t.name),
  );
  if (problems.length > 0) throw new ConfigError(problems);
  const plan = buildPlan(opts.config, { tools: catalogue.tools, codeAgents: opts.codeAgents ?? {} });
  const hosted = opts.agents ?? Object.keys(plan.agents);
  for (const name of hosted) {
    if (!plan.agents[name]) {
      throw new ConfigError([{ file: 'RUNNER_AGENTS', path: name, message: `unknown agent "${name}"` }]);
    }
  }
  const metrics = runnerMetrics();
  const limits = withDefaultLimits(opts.limits);
  const dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 256 });
  const models = new Map<string, ChatModel>();
  for (const [name, m] of Object.entries(opts.config.models)) {
    const client = opts.modelFactory
      ? opts.modelFactory(m)
      : new OpenAIChatModel(m, dispatcher, undefined, limits.maxModelReplyBytes);
    models.set(
      name,
      m.maxConcurrency
        ? new ConcurrencyLimitedModel(client, redis, keys.modelSlots(name), m.maxConcurrency)
        : client,
    );
  }
  const queues = new Map(
    Object.keys(plan.agents).map((name) => [
      name,
      new Queue(queueName(name), { connection: redis, prefix: keys.bullPrefix }),
    ]),
  );
  const tools = new Map<string, ToolInfo>(catalogue.tools.map((t) => [t.name, t]));
  const ctx: RunnerContext = {
    runnerId: id,
    plan,
    codeAgents: opts.codeAgents ?? {},
    store: new ActivationStore(redis, meshScripts(redis), keys, opts.retentionSeconds),
    queues,
    models,
    catalogue: () => tools,
    tools: new ToolClient(opts.toolHostUrl, opts.internalToken, dispatcher),
    limits,
    retentionSeconds: opts.retentionSeconds,
    metrics,
    log: opts.log,
  };
  const slots = new Slots(opts.concurrency);
  // Cancellation's fast path: the gateway flags the subtree in Redis (what every activation
  // checks) and broadcasts the ids; an activation in flight here aborts its model and tool calls.
  const inFlight = new Map<string, AbortController>();
  const subscriber = new Redis(opts.redisUrl, { maxRetriesPerRequest: null });
  subscriber.on('error', (e: Error) => opts.log.warn({ err: e.message }, 'redis subscriber error'));
  subscriber.on('message', (_channel: string, invocationId: string) => {
    inFlight.get(invocationId)?.abort(new MeshError('cancelled', 'The invocation was cancelled.'));
  });
  await subscriber.subscribe(keys.cancelChannel());
  const workers = hosted.map(
    (name) =>
      new Worker(
        queueName(name),
        async (job, token, signal) => {
          await slots.acquire();
          metrics.slotsInUse.set(slots.inUse);
          const cancel = new AbortController();
          // Each call in flight listens on it (timeoutSignal), up to a turn's calls at once: not a leak.
          setMaxListeners(limits.maxCallsPerTurn + 16, cancel.signal);
          const invocationId = (job.data as { invocationId?: string })?.invocationId ?? '';
          inFlight.set(invocationId, cancel);
          // The job's own signal (its lock lost) aborts the activation too; linked by hand, not with
          // AbortSignal.any, whose links outlive the job.
          const onLockLost = () => cancel.abort(signal?.reason);
          if (signal?.aborted) onLockLost();
          else signal?.addEventListener('abort', onLockLost, { once: true });
          try {
            await runActivation(ctx, job, token ?? '', cancel.signal);
          } catch (e) {
            await settleJobError(e, job, token ?? '', opts.log);
          } finally {
            signal?.removeEventListener('abort', onLockLost);
            inFlight.delete(invocationId);
            slots.release();
            metrics.slotsInUse.set(slots.inUse);
          }
        },
        {
          connection: { ...redisOptions(opts.redisUrl), maxRetriesPerRequest: null },
          prefix: keys.bullPrefix,
          concurrency: opts.concurrency,
          lockDuration: opts.lockDurationMs,
          stalledInterval: Math.max(250, Math.floor(opts.lockDurationMs / 2)),
          // A long-lived parent may outlive several runner crashes (bullmq: `stc` is never reset).
          maxStalledCount: opts.limits.maxRecoveries + 1,
        },
      ),
  );
  for (const w of workers) w.on('error', (e) => opts.log.error({ err: e.message }, 'worker error'));
  const beat = async () => {
    const expiry = Date.now() + HEARTBEAT_MS * 3;
    const p = redis.pipeline();
    for (const name of hosted)
      p.zadd(keys.agentRunners(name), expiry, id).zremrangebyscore(keys.agentRunners(name), 0, Date.now());
    await p.exec().catch((e: Error) => opts.log.warn({ err: e.message }, 'heartbeat failed'));
  };
  await beat();
  const heartbeat = setInterval(() => void beat(), HEARTBEAT_MS);
  const stopWatchdog = startWatchdog(
    redis,
    hosted.map((name) => queues.get(name)!),
    {
      intervalMs: 5_000,
      minParkedMs: 10_000,
      ...opts.watchdog,
      lockKey: keys.watchdogLock(),
      invocationKey: (invocationId) => keys.invocation(rootOf(invocationId), invocationId),
    },
    opts.log,
  );
  const server = opts.metricsPort > 0 ? await serveMetrics(metrics.registry, opts.metricsPort) : undefined;
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
    clearInterval(heartbeat);
    stopWatchdog();
    // Drain: take no new jobs, let the ones in hand finish; past the drain timeout, hand the
    // rest back to the queue (their recorded calls replay wherever they resume).
    const drained = Promise.all(workers.map((w) => w.close()));
    let timer: NodeJS.Timeout | undefined;
    const late = await Promise.race([
      drained.then(() => false),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(true), opts.drainMs ?? 30_000))),
    ]);
    clearTimeout(timer);
    if (late) for (const c of inFlight.values()) c.abort(new HandBackError());
    await drained;
    const p = redis.pipeline();
    for (const name of hosted) p.zrem(keys.agentRunners(name), id);
    await p.exec().catch(() => undefined);
    await Promise.all([...queues.values()].map((q) => q.close()));
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    await dispatcher.close();
    subscriber.disconnect();
    redis.disconnect();
  }
}

async function serveMetrics(registry: { metrics(): Promise<string>; contentType: string }, port: number) {
  const server = http.createServer(async (req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': registry.contentType }).end(await registry.metrics());
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return server;
}
