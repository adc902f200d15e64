import { type AgentPlan, type PlannedCall, SUBAGENT_PREFIX } from '@agentmesh/shared';
import type { Activation } from '../../store/activation-store.js';
import type { RunnerContext } from '../runner-context.js';
import { logApprovalRequest } from './log-approval-request.js';

type Runnable = Extract<PlannedCall, { args: Record<string, unknown> }>;

/** The callable name a call of the model goes by (`approvals:` lists those). */
const callableOf = (c: Runnable) => (c.kind === 'subagent' ? `${SUBAGENT_PREFIX}${c.name}` : c.name);

/**
 * Sorts a turn's calls by approval (docs/guides/approvals-and-budgets.md): a call of a callable that needs approval is asked
 * for (recorded `awaiting_approval`) the first time; it runs once approved (or when a crash left
 * it started after that). Returns the calls that may run now, and whether some still wait.
 */
export async function gateCalls(
  ctx: RunnerContext,
  agent: AgentPlan,
  activation: Activation,
  calls: Runnable[],
): Promise<{ ready: Runnable[]; waiting: boolean }> {
  const gated = new Set(agent.approvals ?? []);
  if (gated.size === 0) return { ready: calls, waiting: false };
  const ready: Runnable[] = [];
  let waiting = false;
  for (const c of calls) {
    if (!gated.has(callableOf(c))) {
      ready.push(c);
      continue;
    }
    const record = activation.records.get(c.callId);
    if (!record) {
      await ctx.store.approvals.request(activation, {
        callId: c.callId,
        kind: c.kind,
        recordName: c.name,
        name: callableOf(c),
        args: c.args,
        providerId: c.providerId,
        runner: ctx.runnerId,
      });
      logApprovalRequest(ctx, activation, c.callId, callableOf(c));
      waiting = true;
    } else if (record.status === 'awaiting_approval') waiting = true;
    else ready.push(c);
  }
  return { ready, waiting };
}
