import {
  type AgentContext,
  type AgentPlan,
  type CallRecord,
  type CodedError,
  compileSchema,
  describeValidation,
  isMeshError,
  type JobData,
  type LoadedCodeAgent,
  narrowToSchema,
  normalizeResult,
  type SubagentResult,
  toolCallId,
} from '@agentmesh/shared';
import type { Job } from 'bullmq';
import type { Activation } from '../store/activation-store.js';
import { CodeAgentReplay, DEADLINE_EXCEEDED } from './code-agent-replay.js';
import { parkOnChildren, submitDelegations } from './delegate.js';
import { finishFailed, finishSucceeded } from './finish-invocation.js';
import type { RunnerContext } from './runner-context.js';

/**
 * One activation of a code agent: its `run` is replayed from the start, fast-forwarding through
 * the recorded calls (`ctx.subagent`, `ctx.step`). When it waits only on children that have not
 * finished (all calls started together already submitted), the invocation parks like a ReAct
 * parent and any runner replays it again once they are done.
 */
export async function runCodeAgent(
  ctx: RunnerContext,
  agent: AgentPlan,
  def: LoadedCodeAgent,
  a: Activation,
  job: Job<JobData>,
  token: string,
  signal: AbortSignal,
): Promise<void> {
  for (;;) {
    // As in the ReAct loop: past its deadline (also when resumed from a park by the watchdog,
    // which wakes overdue parents) the invocation ends whatever its code would do next.
    if (Date.now() >= a.state.deadline) return finishFailed(ctx, a, DEADLINE_EXCEEDED);
    const replay = new CodeAgentReplay(ctx, agent, a, job, signal);
    const outcome = await replay.run(def);
    if (outcome.kind === 'returned') return finish(ctx, agent, a, outcome.value);
    if (outcome.kind === 'failed') return finishFailed(ctx, a, outcome.error);
    if (outcome.kind === 'crashed') throw outcome.error;
    if (outcome.kind === 'threw') {
      const e = outcome.error;
      if (isMeshError(e, 'cancelled')) throw e;
      return finishFailed(ctx, a, { code: 'agent_failed', message: (e as Error)?.message ?? String(e) });
    }
    // Blocked on children: park, unless they all finished meanwhile (then replay at once).
    await parkOnChildren(ctx, a, job, token);
  }
}

async function finish(ctx: RunnerContext, agent: AgentPlan, a: Activation, value: unknown): Promise<void> {
  let output: unknown;
  try {
    output = normalizeResult(value === undefined ? null : value);
  } catch (e) {
    return finishFailed(ctx, a, { code: 'invalid_output', message: (e as Error).message });
  }
  if (agent.outputSchema) {
    const check = compileSchema(agent.outputSchema)(output);
    if (!check.ok) {
      const message = `The output does not match the schema: ${describeValidation(check.details)}`;
      return finishFailed(ctx, a, { code: 'invalid_output', message });
    }
    output = narrowToSchema(output, agent.outputSchema);
  }
  return finishSucceeded(ctx, agent, a, output);
}

/** Builds the `ctx` a code agent's run receives for one replay. */
export function agentContext(
  replay: {
    subagent(name: string, input: unknown): Promise<SubagentResult>;
    step<T>(name: string, fn: () => Promise<T> | T): Promise<T>;
    memory: AgentContext['memory'];
  },
  signal: AbortSignal,
  log: AgentContext['log'],
): AgentContext {
  return {
    subagent: <T>(name: string, input: unknown) => replay.subagent(name, input) as Promise<SubagentResult<T>>,
    step: (name, fn) => replay.step(name, fn),
    memory: replay.memory,
    signal,
    log,
  };
}

/** A durable call of a code agent: the n-th call of its run, whatever kind. */
export function codeCallId(n: number): string {
  return toolCallId(0, n);
}

/** The failure a child's record carries, as `ctx.subagent` returns it. */
export function recordFailure(r: CallRecord): CodedError {
  return (
    r.error ?? {
      code: r.status === 'cancelled' ? 'cancelled' : 'subagent_failed',
      message: 'The sub-agent failed.',
    }
  );
}

/** Submits one delegation of a code agent (same path as a model's `_subagent_` call). */
export async function submitOne(
  ctx: RunnerContext,
  job: Job,
  a: Activation,
  callId: string,
  name: string,
  input: Record<string, unknown>,
  memory: [key: string, valueJson: string][],
): Promise<void> {
  await submitDelegations(ctx, job, a, [
    { kind: 'subagent', callId, name, providerId: '', args: input, memory },
  ]);
}
