import {
  type AgentPlan,
  boundHistory,
  compileSchema,
  describeValidation,
  type JsonSchema,
  MeshError,
  type SessionMessage,
} from '@agentmesh/shared';

/** One message of a chat completion request, as loosely as the route's schema checks it. */
export interface ChatMessageIn {
  role: string;
  content?: unknown;
}

/** What a chat completion request gives the agent: its input, and the conversation before it. */
export interface ChatInput {
  input: unknown;
  /** Earlier user and assistant messages, oldest first, bounded as a session's history is. */
  history: Pick<SessionMessage, 'role' | 'content'>[];
}

const invalid = (message: string, path: string) =>
  new MeshError('invalid_input', message, [{ path, message }]);

/**
 * The agent's input and history from a chat completion's messages (docs/guides/openai-compatible.md):
 * the last message must be a user message and is the input — `{prompt}` for an agent whose input
 * is a prompt, else the input as JSON text, checked against the agent's schema; earlier user and
 * assistant messages are the history; system and developer messages (and tool messages, which
 * only a client's own tools produce) are left out: the agent's instructions stand.
 */
export function chatInput(agent: AgentPlan, messages: readonly ChatMessageIn[]): ChatInput {
  const lastIndex = messages.length - 1;
  const last = messages[lastIndex];
  if (last?.role !== 'user')
    throw invalid(
      'The last message must be a user message: it is the input of the agent.',
      `/messages/${lastIndex}/role`,
    );
  const text = textOf(last.content, `/messages/${lastIndex}/content`);
  const input = isPromptSchema(agent.inputSchema) ? { prompt: text } : jsonInput(agent, text, lastIndex);
  const history: ChatInput['history'] = [];
  messages.slice(0, lastIndex).forEach((m, i) => {
    if (m.role !== 'user' && m.role !== 'assistant') return;
    // An assistant message that only called a client's tools carries no text.
    const content =
      m.content === null || m.content === undefined ? '' : textOf(m.content, `/messages/${i}/content`);
    if (content !== '') history.push({ role: m.role, content });
  });
  return { input, history: boundHistory(history as SessionMessage[]) };
}

/** The input of an agent with a schema other than a prompt's: the message is that input as JSON. */
function jsonInput(agent: AgentPlan, text: string, index: number): unknown {
  const path = `/messages/${index}/content`;
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    throw invalid(
      `Agent ${agent.name} takes structured input: the last message must be it as JSON text.`,
      path,
    );
  }
  if (agent.inputSchema) {
    const verdict = compileSchema(agent.inputSchema)(input);
    if (!verdict.ok)
      throw new MeshError(
        'invalid_input',
        `The input does not match agent ${agent.name}'s schema: ${describeValidation(verdict.details)}`,
        verdict.details.map((d) => ({ path: `${path}${d.path === '/' ? '' : d.path}`, message: d.message })),
      );
  }
  return input;
}

/** A message's text: a string, or an array of text parts joined (any other part is refused). */
function textOf(content: unknown, path: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    const texts = content.map((part: unknown, i) => {
      const p = part as { type?: unknown; text?: unknown } | null;
      if (p?.type === 'text' && typeof p.text === 'string') return p.text;
      throw invalid('Only text content parts are accepted.', `${path}/${i}`);
    });
    return texts.join('\n');
  }
  throw invalid('A message content must be a string or an array of text parts.', path);
}

/** True when the agent's input is a prompt: exactly one string property `prompt` (as its model receives it). */
function isPromptSchema(schema: JsonSchema | null): boolean {
  const properties = schema?.properties as Record<string, { type?: unknown }> | undefined;
  if (typeof properties !== 'object' || properties === null) return false;
  const keys = Object.keys(properties);
  return keys.length === 1 && properties.prompt?.type === 'string';
}
