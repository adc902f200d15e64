import { encodeEvent, encodeNewInvocation, type KeyLayout, textArgs } from '@agentmesh/shared';
import type { Activation, ChildSubmission, PendingRecord } from './activation.js';

/** A Redis reply's flat `[field, value, …]` list as an object. */
export function pairs(flat: string[]): Record<string, string> {
  const o: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) o[flat[i]!] = flat[i + 1]!;
  return o;
}

/** The keys and arguments of RECORD_CALL for a record (memory writes to be appended). */
export function recordCallArgs(
  keys: KeyLayout,
  activation: Activation,
  w: PendingRecord,
  checkCancel: boolean,
): (string | number)[] {
  const s = activation.state;
  return [
    keys.invocation(s.rootId, s.id),
    keys.calls(s.rootId, s.id),
    keys.events(s.rootId),
    keys.memory(s.rootId, s.id),
    keys.invocation(s.rootId, s.rootId),
    keys.texts(s.rootId),
    activation.epoch,
    w.callId,
    w.recordJson,
    w.eventJson,
    ...w.usage,
    checkCancel ? '1' : '0',
    ...textArgs(w.texts),
  ];
}

/** The keys and arguments of SUBMIT_CHILD: the parent's `started` record and the child's state. */
export function submitChildArgs(
  keys: KeyLayout,
  activation: Activation,
  c: ChildSubmission,
): (string | number)[] {
  const s = activation.state;
  const id = c.record.childId!;
  return [
    keys.invocation(s.rootId, s.id),
    keys.calls(s.rootId, s.id),
    keys.invocation(s.rootId, id),
    keys.events(s.rootId),
    activation.epoch,
    c.callId,
    JSON.stringify(c.record),
    encodeEvent(s, 'delegation_started', { callId: c.callId, subagent: c.agent, childId: id }),
    ...encodeNewInvocation({
      id,
      agent: c.agent,
      input: c.input,
      rootId: s.rootId,
      parentId: s.id,
      parentCallId: c.callId,
      parentAgent: s.agent,
      depth: s.depth + 1,
      createdAt: Date.now(),
      deadline: c.deadline,
      defHash: c.defHash,
      ...(s.owner ? { owner: s.owner } : {}),
      ...(s.traceparent ? { traceparent: s.traceparent } : {}),
      ...(s.budget !== undefined ? { budget: s.budget } : {}),
    }),
    ...(c.inputChecked ? ['inputChecked', '1'] : []),
  ];
}
