import { AgentCard, formatSSEErrorEvent, formatSSEEvent, SSE_HEADERS } from '@a2a-js/sdk';
import {
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  validateVersion,
} from '@a2a-js/sdk/server';
import { type AgentPlan, type KeyLayout, MeshError } from '@agentmesh/shared';
import type { FastifyPluginAsync, FastifyRequest } from 'fastify';
import { type Caller, NOBODY } from '../auth/caller.js';
import type { EventHub } from '../events/event-hub.js';
import type { StreamSlots } from '../events/stream-slots.js';
import type { TreeStreams } from '../events/tree-streams.js';
import type { WatchKeeper } from '../events/watch-keeper.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import type { MeshState } from '../mesh-state.js';
import { nameList } from '../setup/name-list.js';
import { A2A_CARD_SCHEMA, A2A_RPC_SCHEMA } from './a2a-schema.js';
import { agentCard } from './agent-card.js';
import { FollowedBusManager } from './followed-bus-manager.js';
import { InvocationExecutor } from './invocation-executor.js';
import { InvocationTaskStore } from './invocation-task-store.js';
import { MeshRequestHandler } from './mesh-request-handler.js';

/** Options of the A2A routes. */
export interface A2aRoutesOptions {
  mesh: MeshState;
  invocations: InvocationService;
  hub: EventHub;
  keys: KeyLayout;
  /** The gateway's open streams: a streaming answer takes one, as an event stream does. */
  slots: StreamSlots;
  /** A streaming answer follows the root's text through these (docs/guides/streaming.md#a2a). */
  streams: TreeStreams;
  watches: WatchKeeper;
  /** MESH_API_KEYS is set: the card declares the bearer scheme. */
  auth: boolean;
  /** The base URL clients reach the gateway at (MESH_PUBLIC_URL); else the request's own origin. */
  publicUrl: string | undefined;
  defaultTimeoutSeconds: number;
}

// The methods answered with a stream (A2A v1.0 names, and v0.3's that the SDK also accepts).
const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);

/**
 * Each agent over A2A (docs/guides/a2a-and-remote-agents.md, the SDK's JSON-RPC transport, A2A v1.0): its public agent card
 * at `GET /a2a/{agent}/.well-known/agent-card.json`, and `POST /a2a/{agent}` for SendMessage,
 * SendStreamingMessage, GetTask, CancelTask and SubscribeToTask, with the gateway's auth. Tasks are
 * invocations, read from Redis, so any gateway answers any task.
 */
export const a2aRoutes: FastifyPluginAsync<A2aRoutesOptions> = async (app, opts) => {
  // An unknown name lists the agents the caller may use, as REST's 404 does; the public card
  // route under auth has no caller to list them for, and says where the list is.
  const agentNamed = (name: string, caller: Caller): AgentPlan => {
    const plan = opts.mesh.plan;
    if (!plan) throw new MeshError('unavailable', 'The tool catalogue has not been published yet.');
    const agent = Object.hasOwn(plan.agents, name) ? plan.agents[name] : undefined;
    if (agent) return agent;
    const known = Object.keys(plan.agents).filter((a) => caller.mayUse(a));
    const where = caller === NOBODY ? 'GET /agents with an API key lists them' : `agents: ${nameList(known)}`;
    throw new MeshError('agent_not_found', `No agent is named ${name} (${where}).`);
  };
  const baseUrl = (req: FastifyRequest): string =>
    opts.publicUrl
      ? opts.publicUrl.replace(/\/$/, '')
      : `${req.protocol}://${req.headers.host ?? 'localhost'}`;

  app.get<{ Params: { agent: string } }>(
    '/a2a/:agent/.well-known/agent-card.json',
    { schema: A2A_CARD_SCHEMA },
    async (req) =>
      AgentCard.toJSON(agentCard(agentNamed(req.params.agent, req.meshCaller), baseUrl(req), opts.auth)),
  );

  app.post<{ Params: { agent: string } }>('/a2a/:agent', { schema: A2A_RPC_SCHEMA }, async (req, reply) => {
    const agent = agentNamed(req.params.agent, req.meshCaller);
    if (!req.meshCaller.mayUse(agent.name))
      throw new MeshError('forbidden', `This API key may not use agent ${agent.name}.`);
    const card = agentCard(agent, baseUrl(req), opts.auth);
    const ended = new AbortController();
    const follow = { reader: opts.invocations, hub: opts.hub, keys: opts.keys };
    const traceparent = typeof req.headers.traceparent === 'string' ? req.headers.traceparent : undefined;
    const executor = new InvocationExecutor({
      ...follow,
      invocations: opts.invocations,
      agent,
      caller: req.meshCaller,
      defaultTimeoutSeconds: opts.defaultTimeoutSeconds,
      traceparent,
      signal: ended.signal,
      streams: opts.streams,
      watches: opts.watches,
    });
    const tasks = new InvocationTaskStore(opts.invocations, agent.name, req.meshCaller);
    const handler = new MeshRequestHandler(
      agent,
      card,
      tasks,
      executor,
      new FollowedBusManager(follow, ended.signal, { streams: opts.streams, tasks }),
    );
    const version = req.headers['a2a-version'];
    const context = defaultServerCallContextBuilder({
      extensions: undefined,
      user: undefined,
      headers: req.headers,
      requestedVersion: typeof version === 'string' ? version : undefined,
    });
    const id = (req.body as { id?: string | number } | undefined)?.id ?? null;
    const rpcError = (e: unknown) => ({
      jsonrpc: '2.0',
      id,
      error: JsonRpcTransportHandler.mapToJSONRPCError(e),
    });
    // Refused (429 too_many_streams) before anything starts, as GET /invocations/{id}/events is.
    const method = (req.body as { method?: unknown } | undefined)?.method;
    const release = STREAMING.has(String(method)) ? opts.slots.acquire(req.meshCaller.owner) : undefined;
    reply.hijack();
    const res = reply.raw;
    res.on('close', () => {
      ended.abort();
      release?.();
    });
    try {
      validateVersion(context.requestedVersion, card, 'JSONRPC');
      const answer = await new JsonRpcTransportHandler(handler).handle(
        req.body as Record<string, unknown>,
        context,
      );
      if (!(Symbol.asyncIterator in answer)) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
        return;
      }
      const first = await answer.next().catch((e: unknown) => ({ error: e }));
      if ('error' in first) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(rpcError(first.error)));
        return;
      }
      res.writeHead(200, SSE_HEADERS);
      try {
        if (!first.done) res.write(formatSSEEvent(first.value));
        for await (const event of { [Symbol.asyncIterator]: () => answer }) res.write(formatSSEEvent(event));
      } catch (e) {
        if (!res.writableEnded) res.write(formatSSEErrorEvent(rpcError(e)));
      }
      res.end();
    } catch (e) {
      req.log.error({ err: (e as Error).message }, 'a2a request failed');
      if (!res.headersSent)
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(rpcError(e)));
      else if (!res.writableEnded) res.end();
    }
  });
};
