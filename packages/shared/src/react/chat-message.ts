import { type Static, Type } from '@sinclair/typebox';

/** One tool call in an assistant message, as the OpenAI Chat Completions API carries it. */
export const ChatToolCall = Type.Object({
  id: Type.String(),
  type: Type.Literal('function'),
  function: Type.Object({
    name: Type.String(),
    /** The arguments as the model wrote them: JSON text, not yet parsed. */
    arguments: Type.String(),
  }),
});
export type ChatToolCall = Static<typeof ChatToolCall>;

/** The role of a chat message. */
export const ChatRole = Type.Union([
  Type.Literal('system'),
  Type.Literal('user'),
  Type.Literal('assistant'),
  Type.Literal('tool'),
]);
export type ChatRole = Static<typeof ChatRole>;

/** One message of a conversation, in the OpenAI Chat Completions shape the model clients speak. */
export const ChatMessage = Type.Object({
  role: ChatRole,
  /** Null on an assistant message that only calls tools. */
  content: Type.Union([Type.String(), Type.Null()]),
  tool_calls: Type.Optional(Type.Array(ChatToolCall)),
  /** On a tool message: the id of the call it answers. */
  tool_call_id: Type.Optional(Type.String()),
});
export type ChatMessage = Static<typeof ChatMessage>;
