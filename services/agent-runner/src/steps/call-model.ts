import { type AgentPlan, buildConversation, type CallRecord, isMeshError } from '@agentmesh/shared';
import type { Activation } from '../store/activation-store.js';
import type { RunnerContext } from './runner-context.js';

/**
 * Makes the model call of `turn` durably: `started` is recorded first, so a crash leaves it in
 * doubt and the next activation re-issues it; the reply is recorded before the loop goes on.
 * Returns the coded error when the model failed for good.
 */
export async function callModel(
  ctx: RunnerContext,
  agent: AgentPlan,
  a: Activation,
  turn: number,
  callId: string,
  signal: AbortSignal,
): Promise<{ code: string; message: string } | undefined> {
  const model = ctx.models.get(agent.model ?? '');
  const started: CallRecord = {
    v: 1,
    callId,
    kind: 'model',
    name: agent.model ?? '',
    status: 'started',
    startedAt: new Date().toISOString(),
    runner: ctx.runnerId,
  };
  await ctx.store.record(a, started);
  const t0 = performance.now();
  try {
    if (!model)
      throw new Error(`agent ${agent.name} names model ${agent.model}, which this runner does not have`);
    const messages = buildConversation(agent, a.state.input, a.records, turn);
    const reply = await model.complete({
      messages,
      tools: agent.callables,
      signal,
      deadline: a.state.deadline,
    });
    ctx.metrics.modelCalls.inc({ agent: agent.name, outcome: 'succeeded' });
    ctx.metrics.modelSeconds.observe({ agent: agent.name }, (performance.now() - t0) / 1000);
    await ctx.store.record(
      a,
      { ...started, status: 'succeeded', finishedAt: new Date().toISOString(), reply },
      {
        type: 'model_call',
        data: { callId, turn, content: reply.content, toolCalls: reply.toolCalls.map((c) => c.name) },
      },
      { modelCalls: 1, ...reply.usage },
    );
    return undefined;
  } catch (e) {
    if (isMeshError(e, 'cancelled')) {
      // A cancelled call is not a failure: no terminal failure is recorded for it (DESIGN §7).
      await ctx.store.record(a, { ...started, status: 'cancelled', finishedAt: new Date().toISOString() });
      throw e;
    }
    if (signal.aborted) throw e;
    const error = isMeshError(e)
      ? { code: e.code, message: e.message }
      : { code: 'model_error', message: (e as Error).message };
    ctx.metrics.modelCalls.inc({ agent: agent.name, outcome: 'failed' });
    await ctx.store.record(a, { ...started, status: 'failed', finishedAt: new Date().toISOString(), error });
    return error;
  }
}
