import {
  type CallDetail,
  callDetailOf,
  isInvocationId,
  type KeyLayout,
  MeshError,
  type MeshPlan,
} from '@agentmesh/shared';
import type { MeshScripts } from '@agentmesh/shared/redis';
import type { Caller } from '../auth/caller.js';
import { readInvocationSafely } from '../invocations/read-invocation-safely.js';

/**
 * The detail of call `callId` of invocation `id` for `caller` (docs/guides/console.md): 404
 * `invocation_not_found` for an id it may not see (as GET /invocations/{id}), 404 `call_not_found`
 * for a call the invocation has no record of. Reads the invocation, and a delegation's child.
 */
export async function readCallDetail(
  scripts: MeshScripts,
  keys: KeyLayout,
  plan: MeshPlan | undefined,
  id: string,
  callId: string,
  caller: Caller,
): Promise<CallDetail> {
  const found = isInvocationId(id) ? await readInvocationSafely(scripts, keys, id) : undefined;
  if (!found || !caller.sees(found.state.owner)) {
    throw new MeshError('invocation_not_found', `No invocation has id ${id}.`);
  }
  const record = found.calls.find((r) => r.callId === callId);
  if (!record) {
    throw new MeshError('call_not_found', `Invocation ${id} has no call with id ${callId}.`);
  }
  const child =
    record.kind === 'subagent' && record.childId && isInvocationId(record.childId)
      ? (await readInvocationSafely(scripts, keys, record.childId))?.state
      : undefined;
  // The messages are rebuilt with the agent's definition only when it is the one the call ran with.
  const agent = plan?.agents[found.state.agent];
  const detail = callDetailOf({
    state: found.state,
    records: found.calls,
    callId,
    agent: agent?.definitionHash === found.state.defHash ? agent : undefined,
    child,
  });
  return detail!;
}
