import {
  type AgentPlan,
  type CodedError,
  normalizeTypedResult,
  toChatMessageContent,
  truncateResult,
} from '@agentmesh/shared';
import { agentLabel } from '../metrics.js';
import type { Activation } from '../store/activation-store.js';
import type { RunnerContext } from './runner-context.js';

/** Ends an invocation with its output; a delegation's parent gets the normalized content. */
export async function finishSucceeded(
  ctx: RunnerContext,
  agent: AgentPlan,
  a: Activation,
  output: unknown,
): Promise<void> {
  let content: string;
  try {
    content = truncateResult(
      toChatMessageContent(normalizeTypedResult(output, agent.outputSchema)),
      ctx.limits.maxResultBytes,
    );
  } catch (e) {
    // A result JSON cannot express is a failed delegation with the path (DESIGN §6), never a crash.
    return finishFailed(ctx, a, { code: 'invalid_output', message: (e as Error).message });
  }
  if (await ctx.store.finish(a.state, a.epoch, { status: 'succeeded', output, content }, a)) {
    ctx.metrics.invocations.inc({ agent: agentLabel(ctx.plan, a.state.agent), status: 'succeeded' });
    observeDelegation(ctx, a, 'succeeded');
    logFinished(ctx, a, 'succeeded');
  }
}

/** Ends an invocation as failed (or cancelled) with a coded error. */
export async function finishFailed(
  ctx: RunnerContext,
  a: Activation,
  error: CodedError,
  status: 'failed' | 'cancelled' = 'failed',
): Promise<void> {
  if (await ctx.store.finish(a.state, a.epoch, { status, error }, a)) {
    ctx.metrics.invocations.inc({ agent: agentLabel(ctx.plan, a.state.agent), status });
    observeDelegation(ctx, a, status);
    logFinished(ctx, a, status, error);
  }
}

/** The one line an invocation's end gets at info: agent, id, status, time since it was created. */
function logFinished(ctx: RunnerContext, a: Activation, status: string, error?: CodedError): void {
  const s = a.state;
  const durationMs = Date.now() - s.createdAt;
  ctx.log.info(
    { agent: s.agent, invocationId: s.id, status, durationMs, rootId: s.rootId, ...(error ? { error } : {}) },
    'invocation finished',
  );
}

/** Delegation metrics are named by the registered sub-agent name, never the callable prefix. */
function observeDelegation(ctx: RunnerContext, a: Activation, outcome: string): void {
  const s = a.state;
  if (!s.parentId) return;
  const labels = { agent: agentLabel(ctx.plan, s.parentAgent), subagent: agentLabel(ctx.plan, s.agent) };
  ctx.metrics.delegations.inc({ ...labels, outcome: outcome === 'succeeded' ? 'succeeded' : 'failed' });
  ctx.metrics.delegationSeconds.observe(labels, (Date.now() - s.createdAt) / 1000);
}
