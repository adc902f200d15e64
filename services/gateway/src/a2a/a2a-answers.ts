import { AgentCard, formatSSEErrorEvent, formatSSEEvent } from '@a2a-js/sdk';
import {
  defaultServerCallContextBuilder,
  JsonRpcTransportHandler,
  validateVersion,
} from '@a2a-js/sdk/server';
import type { AgentPlan } from '@agentmesh/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { STREAM_HEADERS } from '../events/sse-writer.js';
import type { A2aRoutesOptions } from './a2a-route.js';
import { agentCard } from './agent-card.js';
import { FollowedBusManager } from './followed-bus-manager.js';
import { InvocationExecutor } from './invocation-executor.js';
import { InvocationTaskStore } from './invocation-task-store.js';
import { MeshRequestHandler } from './mesh-request-handler.js';

// The A2A routes' answers, on the A2A SDK: a2a-route.ts loads this module with the first A2A
// request, so a gateway no A2A client calls never loads the SDK (and jose, which it imports).

// The methods answered with a stream (A2A v1.0 names, and v0.3's that the SDK also accepts).
const STREAMING = new Set(['SendStreamingMessage', 'SubscribeToTask', 'message/stream', 'tasks/resubscribe']);

/** The agent card of `agent` as JSON. */
export const cardJson = (agent: AgentPlan, baseUrl: string, auth: boolean): unknown =>
  AgentCard.toJSON(agentCard(agent, baseUrl, auth));

/** Answers one JSON-RPC request of `POST /a2a/{agent}`, on the raw response (a stream or a JSON answer). */
export async function answerRpc(
  req: FastifyRequest,
  reply: FastifyReply,
  agent: AgentPlan,
  baseUrl: string,
  opts: A2aRoutesOptions,
): Promise<void> {
  const card = agentCard(agent, baseUrl, opts.auth);
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
  const end = () => ended.abort();
  opts.open.add(end);
  res.on('close', () => {
    opts.open.delete(end);
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
    res.writeHead(200, STREAM_HEADERS); // the SDK's SSE_HEADERS name Connection: keep-alive
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
}
