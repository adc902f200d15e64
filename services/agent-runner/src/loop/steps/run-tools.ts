import {
  type CallRecord,
  type CodedError,
  codedError,
  DEFAULT_TOOL_TIMEOUT_MS,
  isMeshError,
  messageOf,
  normalizeResult,
  type PlannedCall,
  ResultNormalizationError,
  toChatMessageContent,
  truncateResult,
} from '@agentmesh/shared';
import { agentLabel, toolLabel } from '../metrics.js';
import type { Activation } from '../store/activation-store.js';
import { nextAttempt } from '../store/next-attempt.js';
import type { RunnerContext } from './runner-context.js';

type ToolCall = Extract<PlannedCall, { args: Record<string, unknown> }>;
type FailedCall = Extract<PlannedCall, { failure: CodedError }>;

/** How many failed calls are written at once: a reply may carry thousands (docs/reference/bounds.md). */
const RECORD_BATCH = 64;

/** Records the calls that failed before running (unknown callable, bad arguments, a limit). */
export async function recordFailedCalls(
  ctx: RunnerContext,
  activation: Activation,
  calls: PlannedCall[],
): Promise<void> {
  const failed = calls.filter((c): c is FailedCall => 'failure' in c);
  // In batches: each batch's writes go out together, and the event loop turns between batches.
  for (let i = 0; i < failed.length; i += RECORD_BATCH) {
    await Promise.all(failed.slice(i, i + RECORD_BATCH).map((c) => recordFailedCall(ctx, activation, c)));
  }
}

async function recordFailedCall(ctx: RunnerContext, activation: Activation, c: FailedCall): Promise<void> {
  const now = new Date().toISOString();
  await ctx.store.record(
    activation,
    {
      v: 1,
      callId: c.callId,
      kind: c.kind,
      name: c.name,
      status: 'failed',
      startedAt: now,
      finishedAt: now,
      runner: ctx.runnerId,
      providerId: c.providerId,
      error: c.failure,
    },
    { type: 'tool_call', data: { callId: c.callId, name: c.name, status: 'failed', error: c.failure } },
  );
  if (c.kind === 'tool') ctx.metrics.toolCalls.inc({ ...labels(ctx, activation, c.name), outcome: 'failed' });
}

/** Metric labels of a tool call: names the agent does not declare read `unknown` (docs/reference/bounds.md). */
function labels(ctx: RunnerContext, activation: Activation, tool: string): { agent: string; tool: string } {
  return {
    agent: agentLabel(ctx.plan, activation.state.agent),
    tool: toolLabel(ctx.plan.agents[activation.state.agent], tool),
  };
}

/**
 * Runs the plain tool calls of a turn concurrently to completion, each recorded `started` before
 * it goes out (a crash leaves it in doubt: re-issued with the same Idempotency-Key) and its
 * outcome recorded before the loop goes on.
 */
export async function runTools(
  ctx: RunnerContext,
  activation: Activation,
  calls: ToolCall[],
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(calls.map((c) => runTool(ctx, activation, c, signal)));
}

async function runTool(
  ctx: RunnerContext,
  activation: Activation,
  c: ToolCall,
  signal: AbortSignal,
): Promise<void> {
  const s = activation.state;
  const started: CallRecord = {
    v: 1,
    callId: c.callId,
    kind: 'tool',
    name: c.name,
    status: 'started',
    startedAt: new Date().toISOString(),
    runner: ctx.runnerId,
    providerId: c.providerId,
    ...nextAttempt(activation.records.get(c.callId)),
  };
  await ctx.store.record(activation, started);
  const info = ctx.catalogue().get(c.name);
  const t0 = performance.now();
  const timeoutMs = Math.min(
    info?.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
    Math.max(1, s.deadline - Date.now()),
  );
  const outcome = await ctx.tools
    .invoke(
      c.name,
      c.args,
      {
        invocationId: s.id,
        callId: c.callId,
        agent: s.agent,
        deadline: new Date(s.deadline).toISOString(),
        idempotencyKey: `${s.id}/${c.callId}`,
      },
      { signal, timeoutMs, traceparent: s.traceparent },
    )
    .catch(async (e: unknown) => {
      if (isMeshError(e, 'cancelled')) await ctx.store.recordCancelled(activation, started);
      throw e;
    });
  ctx.metrics.toolSeconds.observe(labels(ctx, activation, c.name), (performance.now() - t0) / 1000);
  let content: string | undefined;
  let error: CodedError | undefined;
  if (outcome.ok) {
    try {
      content = truncateResult(
        toChatMessageContent(normalizeResult(outcome.result)),
        ctx.limits.maxResultBytes,
      );
    } catch (thrown) {
      // A result JSON cannot express is the tool's fault, named with its path; anything else ours.
      const e = thrown instanceof ResultNormalizationError ? thrown.about(`tool ${c.name} result`) : thrown;
      error = codedError('tool_failed', isMeshError(e) ? e.message : messageOf('tool_failed'));
      if (!isMeshError(e))
        ctx.log.warn({ ...logFields(activation, c), err: (e as Error).message }, 'tool result refused');
    }
  } else {
    error = outcome.error;
    if (outcome.detail)
      ctx.log.warn({ ...logFields(activation, c), err: outcome.detail }, 'tool call failed');
  }
  ctx.metrics.toolCalls.inc({ ...labels(ctx, activation, c.name), outcome: error ? 'failed' : 'succeeded' });
  const finished: CallRecord = {
    ...started,
    status: error ? 'failed' : 'succeeded',
    finishedAt: new Date().toISOString(),
    ...(error ? { error } : { content: content ?? '' }),
  };
  await ctx.store.record(activation, finished, {
    type: 'tool_call',
    data: { callId: c.callId, name: c.name, status: finished.status, ...(error ? { error } : {}) },
  });
}

function logFields(activation: Activation, c: ToolCall) {
  return {
    invocationId: activation.state.id,
    rootId: activation.state.rootId,
    agent: activation.state.agent,
    callId: c.callId,
    tool: c.name,
  };
}
