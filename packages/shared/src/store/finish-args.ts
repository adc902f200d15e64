import { EVENT_INLINE_BYTES } from '../defaults.js';
import type { KeyLayout } from '../keys.js';
import type { CodedError } from '../wire/invocation-view.js';
import { encodeEvent } from '../wire/mesh-event.js';
import type { InvocationState } from './invocation-state.js';

/** How an invocation ends: with its output and the tool message content for its parent, or an error. */
export type Outcome =
  | { status: 'succeeded'; output: unknown; content: string }
  | { status: 'failed' | 'cancelled'; error: CodedError };

/** The keys and arguments of the FINISH Lua step for an invocation; `epoch` undefined = unfenced. */
export function finishArgs(
  keys: KeyLayout,
  s: InvocationState,
  epoch: number | undefined,
  outcome: Outcome,
  retentionSeconds: number,
  now = Date.now(),
): (string | number)[] {
  const ok = outcome.status === 'succeeded';
  const error = ok ? '' : JSON.stringify(outcome.error);
  const output = ok ? JSON.stringify(outcome.output) : '';
  // A large output is stored once, in the state; its event refers to it (EVENT_INLINE_BYTES).
  const outputData = !ok
    ? undefined
    : Buffer.byteLength(output, 'utf8') > EVENT_INLINE_BYTES
      ? { status: 'succeeded', outputRef: true }
      : { status: 'succeeded', output: outcome.output };
  const parentEvent = s.parentId
    ? encodeEvent(
        // The parent's own parentCallId is on its hash only: FINISH adds it to this event.
        { id: s.parentId, agent: s.parentAgent ?? '', rootId: s.rootId, depth: Math.max(0, s.depth - 1) },
        'delegation_finished',
        { callId: s.parentCallId, subagent: s.agent, childId: s.id, status: outcome.status },
        now,
      )
    : '';
  return [
    keys.invocation(s.rootId, s.id),
    keys.calls(s.rootId, s.id),
    keys.memory(s.rootId, s.id),
    keys.events(s.rootId),
    keys.calls(s.rootId, s.parentId ?? s.id),
    keys.invocation(s.rootId, s.parentId ?? s.id),
    keys.invocation(s.rootId, s.rootId),
    epoch ?? '',
    outcome.status,
    output,
    error,
    now,
    s.parentCallId ?? '',
    outcome.status,
    ok ? outcome.content : '',
    error,
    new Date(now).toISOString(),
    encodeEvent(s, ok ? 'output' : 'status', outputData ?? outcome, now),
    retentionSeconds,
    keys.doneChannel(),
    parentEvent,
  ];
}
