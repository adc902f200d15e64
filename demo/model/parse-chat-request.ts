/** A tool call of an assistant message, arguments still as JSON text. */
export interface DemoToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** One message of a Chat Completions request, content flattened to text. */
export interface DemoMessage {
  role: 'system' | 'developer' | 'user' | 'assistant' | 'tool';
  content: string;
  toolCalls: DemoToolCall[];
  toolCallId?: string;
}

/** A function the request offers the model. */
export interface DemoTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The parts of a Chat Completions request the demo model decides from. */
export interface ChatRequest {
  model: string;
  messages: DemoMessage[];
  tools: DemoTool[];
  /** Answer as Server-Sent Events of `chat.completion.chunk`s (`stream: true`). */
  stream: boolean;
  /** With `stream_options.include_usage`: a last chunk with the usage and no choices. */
  includeUsage: boolean;
}

/** A request the OpenAI API would refuse with 400; `param` names the offending field. */
export class InvalidRequestError extends Error {
  constructor(
    message: string,
    readonly param: string | null = null,
  ) {
    super(message);
    this.name = 'InvalidRequestError';
  }
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);
const FUNCTION_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Checks a parsed request body the way the OpenAI API does and flattens it; throws InvalidRequestError. */
export function parseChatRequest(body: unknown): ChatRequest {
  if (!isObject(body)) throw new InvalidRequestError('The request body must be a JSON object.');
  if (typeof body.model !== 'string' || body.model === '') {
    throw new InvalidRequestError('You must provide a model parameter.', 'model');
  }
  if (body.stream !== undefined && body.stream !== null && typeof body.stream !== 'boolean') {
    throw new InvalidRequestError("'stream' must be a boolean.", 'stream');
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) {
    throw new InvalidRequestError("'messages' must be a non-empty array.", 'messages');
  }
  const messages = body.messages.map((m, i) => parseMessage(m, `messages[${i}]`));
  if (body.tools !== undefined && !Array.isArray(body.tools)) {
    throw new InvalidRequestError("'tools' must be an array.", 'tools');
  }
  const tools = (body.tools ?? []).map((t: unknown, i: number) => parseTool(t, `tools[${i}]`));
  const options = isObject(body.stream_options) ? body.stream_options : {};
  return {
    model: body.model,
    messages,
    tools,
    stream: body.stream === true,
    includeUsage: body.stream === true && options.include_usage === true,
  };
}

function parseMessage(m: unknown, param: string): DemoMessage {
  if (!isObject(m)) throw new InvalidRequestError(`${param} must be an object.`, param);
  if (typeof m.role !== 'string' || !ROLES.has(m.role)) {
    throw new InvalidRequestError(`${param}.role must be one of ${[...ROLES].join(', ')}.`, `${param}.role`);
  }
  const message: DemoMessage = {
    role: m.role as DemoMessage['role'],
    content: textOf(m.content, `${param}.content`),
    toolCalls: [],
  };
  if (m.role === 'tool') {
    if (typeof m.tool_call_id !== 'string') {
      throw new InvalidRequestError(
        `${param}.tool_call_id is required on a tool message.`,
        `${param}.tool_call_id`,
      );
    }
    message.toolCallId = m.tool_call_id;
  }
  if (m.role === 'assistant' && m.tool_calls !== undefined && m.tool_calls !== null) {
    if (!Array.isArray(m.tool_calls)) throw new InvalidRequestError(`${param}.tool_calls must be an array.`);
    message.toolCalls = m.tool_calls.map((c: unknown, j: number) => {
      const fn = isObject(c) && isObject(c.function) ? c.function : undefined;
      if (
        !isObject(c) ||
        typeof c.id !== 'string' ||
        typeof fn?.name !== 'string' ||
        typeof fn.arguments !== 'string'
      ) {
        const where = `${param}.tool_calls[${j}]`;
        throw new InvalidRequestError(
          `${where} must have an id and a function with a name and arguments.`,
          where,
        );
      }
      return { id: c.id, name: fn.name, arguments: fn.arguments };
    });
  }
  return message;
}

// Content is a string, null (an assistant that only calls tools) or an array of text parts.
function textOf(content: unknown, param: string): string {
  if (content === null || content === undefined) return '';
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((p) => (isObject(p) && typeof p.text === 'string' ? p.text : '')).join('\n');
  }
  throw new InvalidRequestError(`${param} must be a string or an array of content parts.`, param);
}

function parseTool(t: unknown, param: string): DemoTool {
  const fn = isObject(t) && t.type === 'function' && isObject(t.function) ? t.function : undefined;
  if (!fn || typeof fn.name !== 'string' || !FUNCTION_NAME.test(fn.name)) {
    throw new InvalidRequestError(
      `${param} must be {"type": "function", "function": {"name": ...}} with a name matching ${FUNCTION_NAME.source}.`,
      param,
    );
  }
  const parameters = isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} };
  return { name: fn.name, description: typeof fn.description === 'string' ? fn.description : '', parameters };
}
