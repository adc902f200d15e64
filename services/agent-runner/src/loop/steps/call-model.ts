import {
  type AgentPlan,
  buildConversation,
  type CallRecord,
  type ChatMessage,
  type CodedError,
  chargedUsage,
  EVENT_INLINE_BYTES,
  estimateUsage,
  isMeshError,
  MeshError,
  type ModelReply,
} from '@agentmesh/shared';
import { agentLabel } from '../metrics.js';
import type { ReplyListener } from '../model/chat-model.js';
import type { Activation } from '../store/activation-store.js';
import { nextAttempt } from '../store/next-attempt.js';
import { publicError } from './public-error.js';
import type { RunnerContext } from './runner-context.js';

/**
 * Makes the model call of `turn` durably: `started` is recorded first, so a crash leaves it in
 * doubt and the next activation re-issues it; the reply is recorded before the loop goes on.
 * Returns the coded error when the model failed for good.
 */
export async function callModel(
  ctx: RunnerContext,
  agent: AgentPlan,
  activation: Activation,
  turn: number,
  callId: string,
  signal: AbortSignal,
): Promise<CodedError | undefined> {
  // Recorded with ACTIVATE already: turn 0 of a fresh activation, or the call a resumed parent named.
  const prestarted = activation.prestarted === callId ? activation.records.get(callId) : undefined;
  activation.prestarted = undefined;
  const started = prestarted ?? startedRecord(ctx, agent, callId, activation.records.get(callId));
  if (!prestarted) await ctx.store.record(activation, started);
  const label = { agent: agentLabel(ctx.plan, agent.name) };
  const t0 = performance.now();
  let reply: ModelReply;
  let messages: ChatMessage[];
  // Only the model call is caught here: a store error is the system's, and propagates (the job
  // is retried and this call, in doubt, re-issued) instead of failing the invocation.
  // Heard as it streams, while someone watches the tree (docs/guides/streaming.md); a call
  // re-issued after a crash starts its deltas over.
  const deltas = ctx.deltas?.forCall(activation.state, callId, (started.attempt ?? 1) > 1);
  try {
    messages = conversation(agent, activation, turn);
    reply = await complete(ctx, agent, activation, messages, signal, deltas);
  } catch (e) {
    deltas?.discard();
    if (isMeshError(e, 'cancelled')) {
      await ctx.store.recordCancelled(activation, started);
      throw e;
    }
    if (signal.aborted) throw e;
    const error = publicError(e, 'model_error');
    ctx.log.warn(
      {
        invocationId: activation.state.id,
        rootId: activation.state.rootId,
        callId,
        agent: agent.name,
        err: detailOf(e),
      },
      'model call failed',
    );
    ctx.metrics.modelCalls.inc({ ...label, outcome: 'failed' });
    await ctx.store.record(activation, {
      ...started,
      status: 'failed',
      finishedAt: new Date().toISOString(),
      error,
    });
    return error;
  }
  await deltas?.end();
  ctx.metrics.modelCalls.inc({ ...label, outcome: 'succeeded' });
  ctx.metrics.modelSeconds.observe(label, (performance.now() - t0) / 1000);
  // What Redis adds up: integers within bounds, whatever the model said; with a budget, a reply
  // reporting no tokens is charged an estimate (docs/guides/approvals-and-budgets.md, docs/reference/bounds.md). Recorded as charged.
  const answered = reply;
  const estimate =
    activation.state.budget === undefined ? undefined : () => estimateUsage(messages, answered);
  reply = { ...reply, usage: chargedUsage(reply.usage, estimate) };
  // Counted as recorded, so the metric agrees with the views' usage.
  ctx.metrics.tokens.inc({ ...label, kind: 'prompt' }, reply.usage.promptTokens);
  ctx.metrics.tokens.inc({ ...label, kind: 'completion' }, reply.usage.completionTokens);
  // Deferred: the reply travels with the activation's next write (the next call's `started`, the
  // delegations, or the finish), one round trip instead of two; see ActivationStore.record.
  await ctx.store.record(
    activation,
    { ...started, status: 'succeeded', finishedAt: new Date().toISOString(), reply },
    {
      type: 'model_call',
      data: {
        callId,
        turn,
        // A large text is stored once, in the record; the event refers to it (EVENT_INLINE_BYTES).
        ...(Buffer.byteLength(reply.content ?? '', 'utf8') > EVENT_INLINE_BYTES
          ? { contentRef: true }
          : { content: reply.content }),
        toolCalls: reply.toolCalls.map((c) => c.name),
      },
    },
    { modelCalls: 1, promptTokens: reply.usage.promptTokens, completionTokens: reply.usage.completionTokens },
    [],
    { defer: true },
  );
  return undefined;
}

/**
 * A model call's `started` record, written before the call so a crash leaves it in doubt; one
 * left in doubt (`prev`) is re-issued as its next attempt.
 */
function startedRecord(
  ctx: RunnerContext,
  agent: AgentPlan,
  callId: string,
  prev: CallRecord | undefined,
): CallRecord {
  return {
    v: 1,
    callId,
    kind: 'model',
    name: agent.model ?? '',
    status: 'started',
    startedAt: new Date().toISOString(),
    runner: ctx.runnerId,
    ...nextAttempt(prev),
  };
}

/** The messages the model call of `turn` sends: the agent's conversation so far, session history included. */
function conversation(agent: AgentPlan, activation: Activation, turn: number): ChatMessage[] {
  const { input, history } = activation.state;
  return buildConversation(agent, input, activation.records, turn, history);
}

function complete(
  ctx: RunnerContext,
  agent: AgentPlan,
  activation: Activation,
  messages: ChatMessage[],
  signal: AbortSignal,
  listener: ReplyListener | undefined,
): Promise<ModelReply> {
  const model = ctx.models.get(agent.model ?? '');
  if (!model) {
    throw new MeshError(
      'model_error',
      `Agent ${agent.name} names model ${agent.model}, which this runner does not have.`,
    );
  }
  const { deadline, traceparent } = activation.state;
  return model.complete({ messages, tools: agent.callables, signal, deadline, traceparent, listener });
}

/** What the log keeps of a failure: the message, its cause's, and the stack. */
function detailOf(e: unknown): { message: string; cause?: string; stack?: string } {
  const err = e instanceof Error ? e : new Error(String(e));
  const cause = err.cause instanceof Error ? err.cause.message : undefined;
  return { message: err.message, ...(cause ? { cause } : {}), ...(err.stack ? { stack: err.stack } : {}) };
}
