/** The types of events in an invocation tree's log (DESIGN §3, SSE). */
export type MeshEventType =
  | 'status'
  | 'model_call'
  | 'tool_call'
  | 'delegation_started'
  | 'delegation_finished'
  | 'output';

/** One event of the log: who, what, and its data. */
export interface MeshEvent {
  invocationId: string;
  parentId?: string;
  agent: string;
  type: MeshEventType;
  at: string;
  data: unknown;
}

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
