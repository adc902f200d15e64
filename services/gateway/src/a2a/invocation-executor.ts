import {
  AgentEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import type { AgentPlan } from '@agentmesh/shared';
import type { Caller } from '../auth/caller.js';
import type { InvocationService } from '../invocations/invocation-service.js';
import { type FollowDeps, followInvocation } from './follow-invocation.js';
import { inputOf } from './input-of.js';
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
}

/**
 * Runs an A2A message as an invocation of the agent (DESIGN §14): starts it as
 * `POST /agents/{name}/invoke` does, publishes it as a task whose id is the invocation id, then
 * follows it to its end. Cancelling a task cancels its invocation, as `DELETE` does.
 */
export class InvocationExecutor implements AgentExecutor {
  constructor(private readonly deps: ExecutorDeps) {}

  execute = async (ctx: RequestContext, bus: ExecutionEventBus): Promise<void> => {
    const d = this.deps;
    const input = inputOf(d.agent, ctx.userMessage);
    const view = await d.invocations.start(d.agent, input, {
      timeoutMs: d.defaultTimeoutSeconds * 1000,
      waitMs: 0,
      owner: d.caller.owner,
      traceparent: d.traceparent,
    });
    bus.publish(AgentEvent.task(taskOf(view)));
    await followInvocation(d, view.id, bus, d.signal);
  };

  cancelTask = async (taskId: string): Promise<void> => {
    await this.deps.invocations.cancel(taskId, this.deps.caller);
  };
}
