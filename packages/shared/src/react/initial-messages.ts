import { isPlainObject } from '../plan/copy-json.js';
import type { AgentPlan, JsonSchema } from '../plan/types.js';
import type { ChatMessage } from './chat-message.js';

/**
 * The conversation a ReAct invocation starts with (upstream contract 23,
 * docs/reference/upstream-contracts.md): the instructions verbatim as the leading system message (literal
 * text: `{prompt}` is not substituted), the output-schema prompt right after it, then one user
 * message. No message lists the sub-agents (contract 17).
 * An invocation of a session (docs/guides/sessions.md) has the session's earlier exchanges before its user message.
 */
export function initialMessages(
  agent: Pick<AgentPlan, 'instructions' | 'inputSchema' | 'outputSchema'>,
  input: unknown,
  history: readonly Pick<ChatMessage, 'role' | 'content'>[] = [],
): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (agent.instructions !== undefined && agent.instructions !== '') {
    messages.push({ role: 'system', content: agent.instructions });
  }
  if (agent.outputSchema !== null) {
    const content = `The final response should be json format, and match the schema ${JSON.stringify(agent.outputSchema)}`;
    messages.push({ role: 'system', content });
  }
  for (const m of history) messages.push({ role: m.role, content: m.content } as ChatMessage);
  messages.push({ role: 'user', content: userContent(agent.inputSchema, input) });
  return messages;
}

/** The prompt text when the schema is the prompt shape and the input just a prompt; else compact JSON. */
export function userContent(schema: JsonSchema | null, input: unknown): string {
  if (isPromptSchema(schema) && isPlainObject(input)) {
    const keys = Object.keys(input);
    if (keys.length === 1 && typeof input.prompt === 'string') return input.prompt;
  }
  return JSON.stringify(input ?? null);
}

/** True when the schema's properties are exactly one string `prompt` (annotations aside). */
function isPromptSchema(schema: JsonSchema | null): boolean {
  const properties = schema?.properties;
  if (!isPlainObject(properties)) return false;
  const keys = Object.keys(properties);
  return keys.length === 1 && isPlainObject(properties.prompt) && properties.prompt.type === 'string';
}
