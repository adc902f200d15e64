import { type Static, Type } from '@sinclair/typebox';

/** What the runner injects into a tool call (never into a sub-agent call). */
export const ToolContext = Type.Object({
  invocationId: Type.String(),
  callId: Type.String(),
  agent: Type.String(),
  deadline: Type.String({ format: 'date-time' }),
  idempotencyKey: Type.String(),
});
export type ToolContext = Static<typeof ToolContext>;

/** `POST /tools/{name}/invoke` body. */
export const ToolInvokeRequest = Type.Object({
  args: Type.Unknown(),
  context: ToolContext,
});
export type ToolInvokeRequest = Static<typeof ToolInvokeRequest>;

/** `POST /tools/{name}/invoke` success answer. */
export const ToolInvokeResult = Type.Object({ result: Type.Unknown() });
export type ToolInvokeResult = Static<typeof ToolInvokeResult>;
