import { type Static, Type } from '@sinclair/typebox';

/** The types of events in an invocation tree's log (docs/reference/rest-api.md, SSE). */
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
    rootId: Type.Optional(Type.String({ description: 'The root invocation of the tree.' })),
    depth: Type.Optional(Type.Integer({ minimum: 0, description: 'How deep the node is: 0 for the root.' })),
    parentCallId: Type.Optional(
      Type.String({
        description: "Below the root: the delegation call in the parent's `calls` that started this node.",
      }),
    ),
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

/** A fragment of one tool call of a streaming model reply: `arguments` add up, `id` and `name` are set. */
export const ToolCallDelta = Type.Object({
  index: Type.Integer({ minimum: 0 }),
  id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  arguments: Type.Optional(Type.String()),
});
export type ToolCallDelta = Static<typeof ToolCallDelta>;

/**
 * The data of a `delta` event (docs/guides/streaming.md): what a model call added since its previous
 * delta; `seq` counts a call's deltas from 0, and `reset` starts the call's text over.
 */
export const DeltaData = Type.Object({
  callId: Type.String(),
  seq: Type.Integer({ minimum: 0 }),
  content: Type.Optional(Type.String()),
  toolCalls: Type.Optional(Type.Array(ToolCallDelta)),
  reset: Type.Optional(Type.Literal(true)),
});
export type DeltaData = Static<typeof DeltaData>;

/**
 * Who an event is about, and where it sits in its tree: without `rootId` the invocation is a root.
 * An invocation's state has all of these.
 */
export interface EventSource {
  id: string;
  agent: string;
  parentId?: string | undefined;
  rootId?: string | undefined;
  depth?: number | undefined;
  parentCallId?: string | undefined;
}

/** Serializes an event for the tree's stream, placed in its tree (rootId, depth, parentCallId). */
export function encodeEvent(who: EventSource, type: MeshEventType, data: unknown, now = Date.now()): string {
  const event: MeshEvent = {
    invocationId: who.id,
    agent: who.agent,
    type,
    at: new Date(now).toISOString(),
    data,
    rootId: who.rootId ?? who.id,
    depth: who.depth ?? 0,
  };
  if (who.parentId) event.parentId = who.parentId;
  if (who.parentCallId) event.parentCallId = who.parentCallId;
  return JSON.stringify(event);
}
