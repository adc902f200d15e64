import { AgentEvent, type ExecutionEventBus, type RequestContext } from '@a2a-js/sdk/server';
import type { AgentPlan } from '@agentmesh/shared';
import type { Caller } from '../auth/caller.js';
import type { TreeStreams } from '../events/tree-streams.js';
import type { WatchKeeper } from '../events/watch-keeper.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import { streamAnswer } from './answer-chunks.js';
import { type FollowDeps, followInvocation } from './follow-invocation.js';
import { inputOf } from './input-of.js';
import type { SessionAwareExecutor } from './mesh-request-handler.js';
import { messageIdempotencyKey } from './message-idempotency-key.js';
import { taskOf } from './task-of.js';

/** One A2A request's view of the gateway, for its executor. */
export interface ExecutorDeps extends FollowDeps {
  invocations: InvocationService;
  agent: AgentPlan;
  caller: Caller;
  defaultTimeoutSeconds: number;
  traceparent: string | undefined;
  /** Aborted when the request ends: following stops, the invocation goes on. */
  signal: AbortSignal;
  /** A streaming answer reads the root's text from the tree's delta events. */
  streams: TreeStreams;
  /** Watches a tree from before it starts, so its first model call's text is published too. */
  watches: WatchKeeper;
}

/**
 * Runs an A2A message as an invocation of the agent (docs/guides/a2a-and-remote-agents.md): starts it as
 * `POST /agents/{name}/invoke` does, publishes it as a task whose id is the invocation id, then
 * follows it to its end. Cancelling a task cancels its invocation, as `DELETE` does. The same
 * caller repeating a messageId gets the task that message started (like an Idempotency-Key).
 */
export class InvocationExecutor implements SessionAwareExecutor {
  /** Set by the request handler from the message as the client sent it (MeshRequestHandler). */
  session: string | undefined;
  /** Set by the request handler for SendStreamingMessage: the root's answer is streamed in chunks. */
  streaming = false;

  constructor(private readonly deps: ExecutorDeps) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const d = this.deps;
    const input = inputOf(d.agent, ctx.userMessage);
    // A message's contextId is the session (docs/guides/a2a-and-remote-agents.md, docs/guides/sessions.md): its turns queue up like `enqueue`.
    // Not ctx.userMessage's: the SDK makes one up for a message that has none (a UUID that would
    // pass as a session id), and such a message continues no session.
    const session = this.session;
    // Streaming: the tree is watched before the invocation exists, so its first deltas are published.
    let unwatch: (() => void) | undefined;
    let fresh = false;
    try {
      const view = await d.invocations.start(d.agent, input, {
        timeoutMs: d.defaultTimeoutSeconds * 1000,
        waitMs: 0,
        owner: d.caller.owner,
        traceparent: d.traceparent,
        idempotencyKey: messageIdempotencyKey(ctx.userMessage),
        session: session === undefined ? undefined : { id: session, multitask: 'enqueue' },
        beforeLaunch: this.streaming
          ? async (id, isFresh) => {
              fresh = isFresh;
              unwatch = await d.watches.hold(id);
            }
          : undefined,
      });
      bus.publish(AgentEvent.task(taskOf(view, session)));
      const answer = this.streaming ? await streamAnswer(d, view, session ?? view.id, fresh, bus) : undefined;
      unwatch?.(); // the tree's stream holds the watch from here
      unwatch = undefined;
      await followInvocation(d, view.id, bus, d.signal, session, answer);
    } finally {
      unwatch?.();
    }
  };

  cancelTask = async (taskId: string): Promise<void> => {
    await this.deps.invocations.cancel(taskId, this.deps.caller);
  };
}
