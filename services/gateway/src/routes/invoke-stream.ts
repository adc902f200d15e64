import type { AgentPlan, InvocationView, MeshEvent } from '@agentmesh/shared';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { serveTreeStream } from '../events/serve-tree-stream.js';
import { sseFrame } from '../events/sse-writer.js';
import { STREAM_START } from '../events/tree-position.js';
import type { TreeStream } from '../events/tree-stream.js';
import type { TreeStreaming } from '../events/tree-streaming.js';
import type { InvocationService, StartOptions } from '../invocations/invocation-service.js';

/** What `POST /agents/{name}/invoke?stream=true` needs besides the invoke route's own. */
export type InvokeStreamDeps = TreeStreaming;

/**
 * `POST /agents/{name}/invoke?stream=true` (docs/reference/rest-api.md#invoke-and-stream): takes a
 * stream slot (429 JSON past the bounds), watches the tree before it exists (so its first deltas
 * are published), starts the invocation or rejoins an Idempotency-Key's without waiting, then
 * answers `200 text/event-stream` at once: a `status` event whose `data` is the InvocationView,
 * then the tree's events with deltas (structural from the start; deltas from the start for a new
 * invocation, from now for a rejoined one), ending after the root's terminal status. Any refusal
 * before that is the plain invoke's JSON error.
 */
export async function invokeStreaming(
  deps: InvokeStreamDeps,
  invocations: InvocationService,
  agent: AgentPlan,
  input: unknown,
  options: StartOptions,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const release = deps.slots.acquire(req.meshCaller.owner);
  let unwatch: (() => void) | undefined;
  let fresh = false;
  let view: InvocationView;
  let stream: TreeStream;
  try {
    view = await invocations.start(agent, input, {
      ...options,
      waitMs: 0,
      beforeLaunch: async (id, isFresh) => {
        fresh = isFresh;
        unwatch = await deps.watches.hold(id);
      },
    });
    const from = { events: STREAM_START, deltas: fresh ? STREAM_START : undefined };
    stream = await deps.streams.open({ id: view.id, deltas: true, from });
  } catch (e) {
    release();
    throw e;
  } finally {
    unwatch?.(); // the stream holds the watch from here
  }
  const event = {
    invocationId: view.id,
    agent: view.agent,
    type: 'status',
    at: new Date().toISOString(),
    rootId: view.rootId,
    depth: 0,
    data: view,
  } as MeshEvent;
  await serveTreeStream(
    reply,
    stream,
    {
      ...deps.serve,
      deltas: true,
      first: sseFrame({ id: stream.positionId, event, delta: false }),
      release,
      warn: (message) => req.log.warn({ err: message }, 'invoke stream failed'),
    },
    deps.open,
  );
}
