import {
  type AgentPlan,
  type CodedError,
  codedError,
  normalizeTypedResult,
  toChatMessageContent,
} from '@agentmesh/shared';
import type { Outcome } from '@agentmesh/shared/redis';
import { agentLabel } from '../metrics.js';
import { settleRunnerSession } from '../sessions/settle-runner-session.js';
import type { Activation } from '../store/activation-store.js';
import { recordInvocationEnd } from '../tracing.js';
import type { RunnerContext } from './runner-context.js';

/**
 * Ends an invocation with its output; a delegation's parent gets the normalized content, cut at
 * MESH_MAX_RESULT_BYTES (a large one refers to the whole text, stored once: tree-texts.ts).
 */
export async function finishSucceeded(
  ctx: RunnerContext,
  agent: AgentPlan,
  activation: Activation,
  output: unknown,
): Promise<void> {
  let content: string;
  try {
    content = toChatMessageContent(normalizeTypedResult(output, agent.outputSchema));
  } catch (e) {
    // A result JSON cannot express is a failed delegation with the path (docs/reference/callables-and-results.md), never a crash.
    return finishFailed(ctx, activation, codedError('invalid_output', (e as Error).message));
  }
  const contentMaxBytes = ctx.limits.maxResultBytes;
  return end(ctx, activation, { status: 'succeeded', output, content, contentMaxBytes });
}

/** Ends an invocation as failed (or cancelled) with a coded error. */
export async function finishFailed(
  ctx: RunnerContext,
  activation: Activation,
  error: CodedError,
  status: 'failed' | 'cancelled' = 'failed',
): Promise<void> {
  return end(ctx, activation, { status, error });
}

/** Writes the end once; when this step wrote it, counts, logs and traces it. */
async function end(ctx: RunnerContext, activation: Activation, outcome: Outcome): Promise<void> {
  const s = activation.state;
  // What was written, which is not always what was asked: a root cancelled because its tree's
  // budget ran out ends failed with budget_exceeded, and its line, counter and span say so.
  const written = await ctx.store.finish(s, activation.epoch, outcome, activation);
  if (written) {
    const error = written.status === 'succeeded' ? undefined : written.error;
    countEnd(ctx, activation, written.status);
    observeDelegation(ctx, activation, written.status);
    logFinished(ctx, activation, written.status, error);
    recordInvocationEnd({ ...s, status: written.status, ...(error ? { error } : {}) });
  }
  // Also when another step finished it first: settling a session is idempotent (docs/guides/sessions.md).
  await settleRunnerSession(ctx, s);
}

/** An invocation's end, counted and timed (docs/reference/errors.md) from its creation, as its log line times it. */
function countEnd(ctx: RunnerContext, activation: Activation, status: string): void {
  const s = activation.state;
  const labels = { agent: agentLabel(ctx.plan, s.agent), status };
  ctx.metrics.invocations.inc(labels);
  ctx.metrics.invocationSeconds.observe(labels, (Date.now() - s.createdAt) / 1000);
}

/** The one line an invocation's end gets at info: agent, id, status, time since it was created. */
function logFinished(ctx: RunnerContext, activation: Activation, status: string, error?: CodedError): void {
  const s = activation.state;
  const durationMs = Date.now() - s.createdAt;
  ctx.log.info(
    { agent: s.agent, invocationId: s.id, status, durationMs, rootId: s.rootId, ...(error ? { error } : {}) },
    'invocation finished',
  );
}

/** Delegation metrics are named by the registered sub-agent name, never the callable prefix. */
function observeDelegation(ctx: RunnerContext, activation: Activation, outcome: string): void {
  const s = activation.state;
  if (!s.parentId) return;
  const labels = { agent: agentLabel(ctx.plan, s.parentAgent), subagent: agentLabel(ctx.plan, s.agent) };
  ctx.metrics.delegations.inc({ ...labels, outcome: outcome === 'succeeded' ? 'succeeded' : 'failed' });
  ctx.metrics.delegationSeconds.observe(labels, (Date.now() - s.createdAt) / 1000);
}
