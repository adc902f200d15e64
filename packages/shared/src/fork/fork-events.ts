import { EVENT_INLINE_BYTES } from '../defaults.js';
import type { CallRecord } from '../wire/call-record.js';
import { encodeEvent } from '../wire/mesh-event.js';
import type { ForkRecords } from './plan-fork.js';

// Linear: digits up to the fixed `-`.
const TURN = /^t(\d+)-/;

/**
 * The events a fork's stream starts with (docs/guides/durability.md): each reused call as the run that made it
 * announced it, marked `reused: true` (a delegation's start and end, with the original child),
 * then the call whose result was given (`resultGiven: true`), then the fork's `queued` status.
 */
export function forkEvents(fork: { id: string; agent: string }, records: ForkRecords, now: number): string[] {
  const events = records.reused.flatMap((r) => callEvents(r, { reused: true }));
  if (records.given) events.push(...callEvents(records.given, { resultGiven: true }));
  return [
    ...events.map((e) => encodeEvent(fork, e.type, e.data, now)),
    encodeEvent(fork, 'status', { status: 'queued' }, now),
  ];
}

type Mark = { reused: true } | { resultGiven: true };

function callEvents(
  r: CallRecord,
  mark: Mark,
): { type: 'model_call' | 'tool_call' | 'delegation_started' | 'delegation_finished'; data: unknown }[] {
  const error = r.error ? { error: r.error } : {};
  if (r.kind === 'model') {
    const turn = Number(TURN.exec(r.callId)?.[1] ?? 0);
    const reply = r.reply;
    const content = reply?.content ?? null;
    const data = {
      callId: r.callId,
      turn,
      // A large text is the fork's record's (one copy in its tree); the event refers to it, as a live one's does.
      ...(Buffer.byteLength(content ?? '', 'utf8') > EVENT_INLINE_BYTES ? { contentRef: true } : { content }),
      toolCalls: reply?.toolCalls.map((c) => c.name) ?? [],
    };
    return [{ type: 'model_call', data: { ...data, ...mark } }];
  }
  if (r.kind === 'subagent' && r.childId) {
    const ids = { callId: r.callId, subagent: r.name, childId: r.childId };
    return [
      { type: 'delegation_started', data: { ...ids, ...mark } },
      { type: 'delegation_finished', data: { ...ids, status: r.status, ...mark } },
    ];
  }
  if (r.kind === 'subagent' && 'resultGiven' in mark) {
    return [
      {
        type: 'delegation_finished',
        data: { callId: r.callId, subagent: r.name, status: r.status, ...mark },
      },
    ];
  }
  // A tool call, or a delegation refused before it had a child: as recordFailedCalls announces it.
  return [
    { type: 'tool_call', data: { callId: r.callId, name: r.name, status: r.status, ...error, ...mark } },
  ];
}
