import {
  type ApprovalDecisionBody,
  type InvocationView,
  isInvocationId,
  type KeyLayout,
  MeshError,
  rejectionText,
  rootOf,
} from '@agentmesh/shared';
import type { MeshRedis, MeshScripts } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import type { Caller } from '../auth/caller.js';
import { readInvocationSafely } from '../invocations/read-invocation-safely.js';
import { wakeParkedJob } from './wake-parked-job.js';

/** What deciding needs: the connection and its Lua steps, the key layout and the agents' queues. */
export interface DecideDeps {
  redis: MeshRedis;
  scripts: MeshScripts;
  keys: KeyLayout;
  queues: ReadonlyMap<string, Queue>;
  view(id: string): Promise<InvocationView | undefined>;
}

const notFound = (id: string, callId: string) =>
  new MeshError('approval_not_found', `Invocation ${id} has no approval with call id ${callId}.`);

/**
 * Decides a pending approval (docs/guides/approvals-and-budgets.md) for the invocation's owner: one Lua step on the tree
 * (DECIDE_APPROVAL) writes the decision once and moves the call record; then the owner's index
 * forgets it and the parked job is woken, so any runner resumes. Repeating the same decision
 * answers the view again at any time; another decision is `approval_conflict`.
 */
export async function decideApproval(
  deps: DecideDeps,
  id: string,
  callId: string,
  body: ApprovalDecisionBody,
  caller: Caller,
): Promise<InvocationView> {
  if (!isInvocationId(id)) throw notFound(id, callId);
  const found = await readInvocationSafely(deps.scripts, deps.keys, id);
  if (!found || !caller.sees(found.state.owner)) throw notFound(id, callId);
  const request = found.state.approvals.find((a) => a.request.callId === callId)?.request;
  if (!request) throw notFound(id, callId);
  const root = rootOf(id);
  const reason = body.approved ? undefined : body.reason;
  const decidedAt = new Date().toISOString();
  const decision = { approved: body.approved, ...(reason !== undefined ? { reason } : {}), decidedAt };
  const ret = await deps.scripts.decideApproval(
    deps.keys.invocation(root, id),
    deps.keys.calls(root, id),
    callId,
    body.approved ? '1' : '0',
    JSON.stringify(decision),
    JSON.stringify(rejectionText(request.kind, request.name, reason)),
    decidedAt,
  );
  if (ret === 0) throw notFound(id, callId);
  if (ret === 2) throw new MeshError('approval_conflict', `Call ${callId} was decided otherwise already.`);
  if (ret === 4) {
    throw new MeshError(
      'approval_conflict',
      `Invocation ${id} ended (${found.state.status}) before call ${callId} was decided.`,
    );
  }
  if (ret === 3) {
    await deps.redis.zrem(deps.keys.approvalIndex(found.state.owner), `${id} ${callId}`);
    await wakeParkedJob(deps.redis, deps.keys, deps.queues, id);
  }
  return (await deps.view(id))!;
}
