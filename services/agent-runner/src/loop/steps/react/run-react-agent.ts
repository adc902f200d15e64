import { codedError, decideNextStep, modelCallId, type PlannedCall } from '@agentmesh/shared';
import type { AgentRun } from '../agent-run.js';
import { gateCalls } from '../approvals/gate-calls.js';
import { parkOnApproval } from '../approvals/park-on-approval.js';
import { callModel } from '../call-model.js';
import { parkOnChildren, submitDelegations } from '../delegate.js';
import { finishFailed, finishSucceeded } from '../finish-invocation.js';
import { recordFailedCalls, runTools } from '../run-tools.js';

type Runnable = Extract<PlannedCall, { args: Record<string, unknown> }>;

/**
 * The ReAct loop of one activation: asks decideNextStep what to do with the records so far, does
 * it durably (a model call, tool calls, delegations), and repeats until the invocation finishes
 * or parks on its children.
 */
export async function runReactAgent(run: AgentRun): Promise<void> {
  const { ctx, agent, activation, job, token, signal } = run;
  for (;;) {
    if (Date.now() >= activation.state.deadline) {
      return finishFailed(ctx, activation, codedError('deadline_exceeded'));
    }
    const step = decideNextStep(agent, activation.records, {
      depth: activation.state.depth,
      maxDepth: ctx.limits.maxDepth,
      maxDelegationsPerTurn: ctx.limits.maxDelegationsPerTurn,
      maxCallsPerTurn: ctx.limits.maxCallsPerTurn,
    });
    // A call recorded with the activation is this step's only: else it is in doubt, as after a crash.
    if (step.type !== 'call_model' || step.callId !== activation.prestarted)
      activation.prestarted = undefined;
    if (step.type === 'final') return finishSucceeded(ctx, agent, activation, step.output);
    if (step.type === 'fail') return finishFailed(ctx, activation, step.error);
    if (step.type === 'call_model') {
      const error = await callModel(ctx, agent, activation, step.turn, step.callId, signal);
      if (error) return finishFailed(ctx, activation, error);
      continue;
    }
    // Calls that need approval wait for it; the turn's other calls run (docs/guides/approvals-and-budgets.md).
    const { ready: runnable, waiting } = await gateCalls(
      ctx,
      agent,
      activation,
      step.calls.filter((c): c is Runnable => 'args' in c),
    );
    const delegations = runnable.filter((c) => c.kind === 'subagent');
    // A turn of delegations only parks in the round trip that submits them.
    // Resumed once they all finished, it goes on with the next turn's model call (see ACTIVATE).
    const next = step.turn + 1 < agent.maxIterations ? modelCallId(step.turn + 1) : undefined;
    const submitted = await submitDelegations(ctx, job, activation, delegations, {
      park: delegations.length === step.calls.length,
      ...(next ? { resumeCall: next } : {}),
      token,
    });
    await recordFailedCalls(ctx, activation, step.calls);
    await runTools(
      ctx,
      activation,
      runnable.filter((c) => c.kind === 'tool'),
      signal,
    );
    if (delegations.length > 0) await parkOnChildren(ctx, activation, job, token, submitted);
    if (waiting) await parkOnApproval(ctx, activation, job, token);
  }
}
