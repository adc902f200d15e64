import {
  type CallRecord,
  type CodedError,
  isMeshError,
  normalizeResult,
  type PlannedCall,
  toChatMessageContent,
  truncateResult,
} from '@agentmesh/shared';
import type { Activation } from '../store/activation-store.js';
import type { RunnerContext } from './runner-context.js';

type ToolCall = Extract<PlannedCall, { args: Record<string, unknown> }>;

/** Records the calls that failed before running (unknown callable, bad arguments, a limit). */
export async function recordFailedCalls(
  ctx: RunnerContext,
  a: Activation,
  calls: PlannedCall[],
): Promise<void> {
  const now = new Date().toISOString();
  for (const c of calls) {
    if (!('failure' in c)) continue;
    await ctx.store.record(
      a,
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
    if (c.kind === 'tool')
      ctx.metrics.toolCalls.inc({ agent: a.state.agent, tool: c.name, outcome: 'failed' });
  }
}

/**
 * Runs the plain tool calls of a turn concurrently to completion, each recorded `started` before
 * it goes out (a crash leaves it in doubt: re-issued with the same Idempotency-Key) and its
 * outcome recorded before the loop goes on.
 */
export async function runTools(
  ctx: RunnerContext,
  a: Activation,
  calls: ToolCall[],
  signal: AbortSignal,
): Promise<void> {
  await Promise.all(calls.map((c) => runTool(ctx, a, c, signal)));
}

async function runTool(ctx: RunnerContext, a: Activation, c: ToolCall, signal: AbortSignal): Promise<void> {
  const s = a.state;
  const started: CallRecord = {
    v: 1,
    callId: c.callId,
    kind: 'tool',
    name: c.name,
    status: 'started',
    startedAt: new Date().toISOString(),
    runner: ctx.runnerId,
    providerId: c.providerId,
  };
  await ctx.store.record(a, started);
  const info = ctx.catalogue().get(c.name);
  const t0 = performance.now();
  const timeoutMs = Math.min(info?.timeoutMs ?? 60_000, Math.max(1, s.deadline - Date.now()));
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
      // Cancelled: the call ends `cancelled`, never as a recorded failure (DESIGN §7).
      if (isMeshError(e, 'cancelled')) {
        await ctx.store.record(a, { ...started, status: 'cancelled', finishedAt: new Date().toISOString() });
      }
      throw e;
    });
  ctx.metrics.toolSeconds.observe({ agent: s.agent, tool: c.name }, (performance.now() - t0) / 1000);
  let content: string | undefined;
  let error: CodedError | undefined;
  if (outcome.ok) {
    try {
      content = truncateResult(
        toChatMessageContent(normalizeResult(outcome.result)),
        ctx.limits.maxResultBytes,
      );
    } catch (e) {
      error = { code: 'tool_failed', message: (e as Error).message };
    }
  } else {
    error = outcome.error;
  }
  ctx.metrics.toolCalls.inc({ agent: s.agent, tool: c.name, outcome: error ? 'failed' : 'succeeded' });
  const finished: CallRecord = {
    ...started,
    status: error ? 'failed' : 'succeeded',
    finishedAt: new Date().toISOString(),
    ...(error ? { error } : { content: content ?? '' }),
  };
  await ctx.store.record(a, finished, {
    type: 'tool_call',
    data: { callId: c.callId, name: c.name, status: finished.status, ...(error ? { error } : {}) },
  });
}
