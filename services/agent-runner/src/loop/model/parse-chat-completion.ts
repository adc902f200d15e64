import { MeshError, type ModelReply, reportedUsage } from '@agentmesh/shared';

interface RawCompletion {
  choices?: {
    message?: {
      content?: unknown;
      tool_calls?: { id?: unknown; function?: { name?: unknown; arguments?: unknown } }[];
    };
  }[];
  usage?: unknown;
}

/** A malformed reply, with the reason. */
export const malformedReply = (why: string) =>
  new MeshError('invalid_model_reply', `The model reply is malformed: ${why}`);

/** A reply past `MESH_MAX_MODEL_REPLY_BYTES` (docs/reference/bounds.md). */
export const replyTooLarge = (maxBytes: number) =>
  new MeshError('invalid_model_reply', `The model reply exceeds ${maxBytes} bytes.`);

const bad = malformedReply;

/** Reads a Chat Completions answer into a ModelReply, refusing malformed ones with the reason. */
export function parseChatCompletion(text: string): ModelReply {
  let raw: RawCompletion;
  try {
    raw = JSON.parse(text) as RawCompletion;
  } catch {
    throw bad('not JSON');
  }
  const message = raw?.choices?.[0]?.message;
  if (!message || typeof message !== 'object') throw bad('no choices[0].message');
  const content = message.content;
  if (content !== null && content !== undefined && typeof content !== 'string') {
    throw bad('choices[0].message.content is not a string');
  }
  if (message.tool_calls != null && !Array.isArray(message.tool_calls)) {
    throw bad('choices[0].message.tool_calls is not a list');
  }
  const toolCalls = (message.tool_calls ?? []).map((c, i) => {
    const name = c?.function?.name;
    if (typeof name !== 'string' || name === '')
      throw bad(`choices[0].message.tool_calls[${i}].function.name`);
    const args = c.function?.arguments;
    return {
      id: typeof c.id === 'string' ? c.id : '',
      name,
      // Some servers send parsed objects; the loop validates the text either way.
      arguments: typeof args === 'string' ? args : args === undefined ? '{}' : argumentsText(args, i),
    };
  });
  return {
    content: typeof content === 'string' ? content : null,
    toolCalls,
    // Clamped before anything adds it to Redis (docs/reference/bounds.md); none reported counts 0 here, and the
    // model call is charged an estimate when its tree has a budget (chargedUsage).
    usage: reportedUsage(raw.usage) ?? { promptTokens: 0, completionTokens: 0 },
  };
}

/** Parsed arguments as text; nested too deep for JSON.stringify, they make the reply malformed. */
function argumentsText(args: unknown, i: number): string {
  try {
    return JSON.stringify(args) ?? '{}';
  } catch {
    throw bad(`choices[0].message.tool_calls[${i}].function.arguments nest too deeply`);
  }
}
