import {
  type AgentPlan,
  codedError,
  compileSchema,
  describeValidation,
  isMeshError,
  type LoadedCodeAgent,
  narrowToSchema,
  normalizeResult,
} from '@agentmesh/shared';
import type { Activation } from '../../store/activation-store.js';
import type { AgentRun } from '../agent-run.js';
import { parkOnApproval } from '../approvals/park-on-approval.js';
import { parkOnChildren } from '../delegate.js';
import { finishFailed, finishSucceeded } from '../finish-invocation.js';
import type { RunnerContext } from '../runner-context.js';
import { CodeAgentReplay } from './code-agent-replay.js';
import { DEADLINE_EXCEEDED } from './replay-outcome.js';

/**
 * One activation of a code agent: its `run` is replayed from the start, fast-forwarding through
 * the recorded calls (`ctx.subagent`, `ctx.step`). When it waits only on children that have not
 * finished (all calls started together already submitted), the invocation parks like a ReAct
 * parent and any runner replays it again once they are done.
 */
export async function runCodeAgent(run: AgentRun, def: LoadedCodeAgent): Promise<void> {
  const { ctx, agent, activation, job, token } = run;
  for (;;) {
    // As in the ReAct loop: past its deadline (also when resumed from a park by the watchdog,
    // which wakes overdue parents) the invocation ends whatever its code would do next.
    if (Date.now() >= activation.state.deadline) return finishFailed(ctx, activation, DEADLINE_EXCEEDED);
    const replay = new CodeAgentReplay(run);
    const outcome = await replay.run(def);
    if (outcome.kind === 'returned') return finish(ctx, agent, activation, outcome.value);
    if (outcome.kind === 'failed') return finishFailed(ctx, activation, outcome.error);
    if (outcome.kind === 'crashed') throw outcome.error;
    if (outcome.kind === 'threw') {
      const e = outcome.error;
      if (isMeshError(e, 'cancelled')) throw e;
      return finishFailed(ctx, activation, codedError('agent_failed', (e as Error)?.message ?? String(e)));
    }
    // Blocked on children: park, unless they all finished meanwhile (then replay at once); then
    // on approvals (docs/guides/approvals-and-budgets.md) until decided.
    if (replay.children > 0 || replay.approvals === 0) await parkOnChildren(ctx, activation, job, token);
    if (replay.approvals > 0) await parkOnApproval(ctx, activation, job, token);
  }
}

async function finish(
  ctx: RunnerContext,
  agent: AgentPlan,
  activation: Activation,
  value: unknown,
): Promise<void> {
  let output: unknown;
  try {
    output = normalizeResult(value === undefined ? null : value);
  } catch (e) {
    return finishFailed(ctx, activation, codedError('invalid_output', (e as Error).message));
  }
  if (agent.outputSchema) {
    const check = compileSchema(agent.outputSchema)(output);
    if (!check.ok) {
      const message = `The output does not match the schema: ${describeValidation(check.details)}`;
      return finishFailed(ctx, activation, codedError('invalid_output', message));
    }
    output = narrowToSchema(output, agent.outputSchema);
  }
  return finishSucceeded(ctx, agent, activation, output);
}
