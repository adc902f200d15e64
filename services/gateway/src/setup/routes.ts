import type { KeyLayout } from '@agentmesh/shared';
import { type MeshRedis, meshScripts } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Registry } from 'prom-client';
import { a2aRoutes } from '../a2a/a2a-route.js';
import type { EventHub } from '../events/event-hub.js';
import { installTreeStreaming } from '../events/tree-streaming.js';
import type { ForkService } from '../forks/fork-service.js';
import type { GatewayOptions } from '../gateway-options.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import { mcpRoutes } from '../mcp/mcp-route.js';
import type { MeshState } from '../mesh-state.js';
import { openAiRoutes } from '../openai/openai-route.js';
import { treeStreamSource } from '../openai/tree-source.js';
import { agentRoutes } from '../routes/agents.js';
import { approvalRoutes } from '../routes/approvals.js';
import { callRoutes } from '../routes/calls.js';
import { eventRoutes } from '../routes/events.js';
import { forkRoutes } from '../routes/forks.js';
import { healthRoutes } from '../routes/health.js';
import { invocationRoutes } from '../routes/invocations.js';
import { sessionRoutes } from '../routes/sessions.js';

/** What the gateway's routes are served from. */
export interface GatewayRoutesDeps {
  redis: MeshRedis;
  /** The connection in subscriber mode (MCP hears cancellations on it). */
  subscriber: MeshRedis;
  keys: KeyLayout;
  mesh: MeshState;
  hub: EventHub;
  queues: Map<string, Queue>;
  invocations: InvocationService;
  forks: ForkService;
  registry: Registry;
  auth: boolean;
  maxTimeoutSeconds: number;
}

/**
 * Registers the gateway's API on `app`, in this order: health, the tree streaming every stream
 * shares, agents, invocations, calls, forks, approvals, sessions, MCP, A2A, the OpenAI-compatible
 * API under /v1, events (docs/reference/rest-api.md).
 */
export async function registerRoutes(
  app: FastifyInstance,
  d: GatewayRoutesDeps,
  opts: GatewayOptions,
): Promise<void> {
  const { redis, keys, mesh, invocations, maxTimeoutSeconds } = d;
  await app.register(healthRoutes, { redis, keys, mesh, registry: d.registry });
  const streaming = installTreeStreaming(app, { redis, keys, hub: d.hub, reader: invocations }, opts);
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
    forks: d.forks,
    defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
    maxTimeoutSeconds,
  });
  await app.register(approvalRoutes, {
    redis,
    scripts: meshScripts(redis),
    keys,
    queues: d.queues,
    view: (id) => invocations.view(id),
  });
  await app.register(sessionRoutes, { sessions: invocations.sessions!, invocations });
  await app.register(mcpRoutes, {
    mesh,
    invocations,
    redis,
    subscriber: d.subscriber,
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
    open: streaming.open,
    invocations,
    hub: d.hub,
    keys,
    auth: d.auth,
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
    open: streaming.open,
    defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
    ...(opts.heartbeatMs === undefined ? {} : { heartbeatMs: opts.heartbeatMs }),
  });
  await app.register(eventRoutes, { invocations, ...streaming });
}
