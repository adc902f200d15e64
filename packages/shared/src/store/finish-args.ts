import type { KeyLayout } from '../keys.js';
import type { CodedError } from '../wire/invocation-view.js';
import { encodeEvent } from '../wire/mesh-event.js';
import type { InvocationState } from './invocation-state.js';
import { contentFieldsOf, outputFieldOf, type TreeTexts, textArgs } from './tree-texts.js';

/**
 * How an invocation ends: with its output and the tool message content for its parent (cut at
 * `contentMaxBytes` for the parent's record when set: MESH_MAX_RESULT_BYTES), or an error.
 */
export type Outcome =
  | { status: 'succeeded'; output: unknown; content: string; contentMaxBytes?: number }
  | { status: 'failed' | 'cancelled'; error: CodedError };

/**
 * The keys and arguments of the FINISH Lua step for an invocation; `epoch` undefined = unfenced.
 * A large output, and the parent's tool message made of it, are one tree text (tree-texts.ts);
 * `texts` (the texts of a record that travels with it, say) go with them.
 */
export function finishArgs(
  keys: KeyLayout,
  s: InvocationState,
  epoch: number | undefined,
  outcome: Outcome,
  retentionSeconds: number,
  now = Date.now(),
  texts: TreeTexts = new Map(),
): (string | number)[] {
  const ok = outcome.status === 'succeeded';
  const error = ok ? '' : JSON.stringify(outcome.error);
  const [outputField, output] = ok ? outputFieldOf(outcome.output, texts) : ['output', ''];
  // Only a delegation has a parent's record to complete (a root's content would be a text for no one).
  const parentFields =
    ok && s.parentCallId ? contentFieldsOf(outcome.content, outcome.contentMaxBytes, texts) : undefined;
  // A large output is stored once, in the tree's texts; its event refers to it (EVENT_INLINE_BYTES).
  const outputData = !ok
    ? undefined
    : outputField !== 'output'
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
    keys.texts(s.rootId),
    epoch ?? '',
    outcome.status,
    output,
    error,
    now,
    s.parentCallId ?? '',
    outcome.status,
    parentFields ? JSON.stringify(parentFields) : '',
    error,
    new Date(now).toISOString(),
    encodeEvent(s, ok ? 'output' : 'status', outputData ?? outcome, now),
    retentionSeconds,
    keys.doneChannel(),
    parentEvent,
    outputField,
    ...textArgs(texts),
  ];
}
