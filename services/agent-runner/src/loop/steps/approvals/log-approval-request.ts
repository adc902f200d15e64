import type { Activation } from '../../store/activation-store.js';
import type { RunnerContext } from '../runner-context.js';

/**
 * The line a new approval request gets at info (docs/guides/approvals-and-budgets.md): who asks, for which call. npm start
 * turns it into the curl that decides it (scripts/approval-notice.ts).
 */
export function logApprovalRequest(
  ctx: RunnerContext,
  activation: Activation,
  callId: string,
  name: string,
): void {
  const s = activation.state;
  ctx.log.info(
    // `callable` last: npm start reads the rest of a pretty line as its value (it may hold spaces).
    { agent: s.agent, invocationId: s.id, rootId: s.rootId, callId, callable: name },
    'approval requested',
  );
}
