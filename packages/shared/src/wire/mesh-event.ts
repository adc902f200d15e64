import { type Static, Type } from '@sinclair/typebox';

/** The types of events in an invocation tree's log (DESIGN §3, SSE). */
export const MeshEventType = Type.Union([
  Type.Literal('status'),
  Type.Literal('model_call'),
  Type.Literal('tool_call'),
  Type.Literal('delegation_started'),
  Type.Literal('delegation_finished'),
  Type.Literal('output'),
  Type.Literal('approval_requested'),
  Type.Literal('delta'),
]);
export type MeshEventType = Static<typeof MeshEventType>;

/** One event of the log: who, what, and its data (the `data:` line of each Server-Sent Event). */
export const MeshEvent = Type.Object(
  {
    invocationId: Type.String({ description: 'The invocation of the tree the event belongs to.' }),
    parentId: Type.Optional(Type.String({ description: "The invocation's parent (absent for the root)." })),
    agent: Type.String(),
    type: MeshEventType,
    at: Type.String({ format: 'date-time' }),
    data: Type.Unknown({
      description:
        'By type: `status` {status, error?} (every invocation ends with a terminal one); `model_call` ' +
        '{callId, turn, content, toolCalls}; `tool_call` {callId, name, status, error?}; ' +
        '`delegation_started` {callId, subagent, childId}; `delegation_finished` {callId, subagent, ' +
        'childId, status}; `output` {status: succeeded, output}; `approval_requested` {callId, name, args}.',
    }),
  },
  {
    title: 'MeshEvent',
    description:
      'One Server-Sent Event of an invocation tree: `id:` is its position (send it back as ' +
      "`Last-Event-ID` to resume), `event:` its type, `data:` this JSON. A fork's stream starts with " +
      'the calls it reused, their `data` marked `reused: true` (a given result `resultGiven: true`).',
  },
);
export type MeshEvent = Static<typeof MeshEvent>;

/** Serializes an event for the tree's stream. */
export function encodeEvent(
  who: { id: string; parentId?: string | undefined; agent: string },
  type: MeshEventType,
  data: unknown,
  now = Date.now(),
): string {
  const event: MeshEvent = {
    invocationId: who.id,
    agent: who.agent,
    type,
    at: new Date(now).toISOString(),
    data,
  };
  if (who.parentId) event.parentId = who.parentId;
  return JSON.stringify(event);
}
