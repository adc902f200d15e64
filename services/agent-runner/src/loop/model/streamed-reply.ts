import { type ModelReply, reportedUsage, type ToolCallDelta } from '@agentmesh/shared';
import type { ReplyListener } from './chat-model.js';
import { malformedReply, replyTooLarge } from './parse-chat-completion.js';

interface RawChunk {
  choices?: unknown;
  usage?: unknown;
  error?: { message?: unknown } | null;
}

interface RawChoice {
  index?: unknown;
  delta?: { content?: unknown; tool_calls?: unknown } | null;
  finish_reason?: unknown;
}

interface RawToolCall {
  index?: unknown;
  id?: unknown;
  function?: { name?: unknown; arguments?: unknown } | null;
}

/** A provider reported an error in the middle of its stream: retried like a 5xx. */
export class ModelStreamError extends Error {}

/** What one new tool call costs toward the reply's byte bound, whatever it carries. */
const CALL_OVERHEAD_BYTES = 16;

/**
 * Assembles a streamed Chat Completions reply (`chat.completion.chunk`s) into exactly the
 * ModelReply its non-streamed twin would give: content concatenated (null when no text came),
 * tool calls by `index` (arguments concatenated, `id` and `name` set), the last `usage` seen.
 * Each chunk's additions go to the listener as they arrive. The bytes of the reply so far are
 * bounded (`MESH_MAX_MODEL_REPLY_BYTES`, docs/reference/bounds.md).
 */
export class StreamedReply {
  private content = '';
  private sawContent = false;
  private readonly calls = new Map<number, { id?: string; name?: string; args?: string }>();
  private bytes = 0;
  private finished = false;
  private usage: unknown;

  constructor(
    private readonly maxBytes: number,
    private readonly listener?: ReplyListener | undefined,
  ) {}

  /** Takes one event's data; false once it is `[DONE]` (nothing after it counts). */
  take(data: string): boolean {
    if (data === '[DONE]') return false;
    let chunk: RawChunk;
    try {
      chunk = JSON.parse(data) as RawChunk;
    } catch {
      throw malformedReply('a stream event is not JSON');
    }
    if (typeof chunk !== 'object' || chunk === null || Array.isArray(chunk)) {
      throw malformedReply('a stream event is not an object');
    }
    if (chunk.error != null) {
      const message = typeof chunk.error.message === 'string' ? chunk.error.message.slice(0, 500) : '';
      throw new ModelStreamError(`The model endpoint failed mid-stream: ${message}`);
    }
    if (chunk.usage != null) this.usage = chunk.usage;
    if (chunk.choices == null) return true;
    if (!Array.isArray(chunk.choices)) throw malformedReply('a stream event’s choices is not a list');
    const choice = (chunk.choices as unknown[]).find(
      (c): c is RawChoice => typeof c === 'object' && c !== null && ((c as RawChoice).index ?? 0) === 0,
    );
    if (!choice) return true;
    const delta = choice.delta;
    if (delta != null && typeof delta !== 'object') throw malformedReply('choices[0].delta is not an object');
    const content = this.takeContent(delta?.content);
    const toolCalls = this.takeToolCalls(delta?.tool_calls);
    if (this.bytes > this.maxBytes) throw replyTooLarge(this.maxBytes);
    if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') this.finished = true;
    if (content !== undefined || toolCalls !== undefined) {
      this.listener?.delta({
        ...(content !== undefined ? { content } : {}),
        ...(toolCalls !== undefined ? { toolCalls } : {}),
      });
    }
    return true;
  }

  /** The reply; `invalid_model_reply` when the stream ended before a chunk with a finish_reason. */
  reply(): ModelReply {
    if (!this.finished) throw malformedReply('the stream ended before a finish_reason');
    const toolCalls = [...this.calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([, c], i) => {
        if (c.name === undefined || c.name === '')
          throw malformedReply(`choices[0].message.tool_calls[${i}].function.name`);
        return { id: c.id ?? '', name: c.name, arguments: c.args ?? '{}' };
      });
    return {
      content: this.sawContent ? this.content : null,
      toolCalls,
      usage: reportedUsage(this.usage) ?? { promptTokens: 0, completionTokens: 0 },
    };
  }

  private takeContent(content: unknown): string | undefined {
    if (content === undefined || content === null) return undefined;
    if (typeof content !== 'string') throw malformedReply('choices[0].delta.content is not a string');
    this.sawContent = true;
    if (content === '') return undefined;
    this.content += content;
    this.bytes += Buffer.byteLength(content, 'utf8');
    return content;
  }

  private takeToolCalls(raw: unknown): ToolCallDelta[] | undefined {
    if (raw === undefined || raw === null) return undefined;
    if (!Array.isArray(raw)) throw malformedReply('choices[0].delta.tool_calls is not a list');
    const out: ToolCallDelta[] = [];
    (raw as unknown[]).forEach((item, position) => {
      if (typeof item !== 'object' || item === null) {
        throw malformedReply('choices[0].delta.tool_calls holds a non-object');
      }
      const tc = item as RawToolCall;
      const index =
        Number.isSafeInteger(tc.index) && (tc.index as number) >= 0 ? (tc.index as number) : position;
      let call = this.calls.get(index);
      if (!call) {
        call = {};
        this.calls.set(index, call);
        this.bytes += CALL_OVERHEAD_BYTES;
      }
      const piece: ToolCallDelta = { index };
      if (typeof tc.id === 'string' && tc.id !== '') {
        call.id = tc.id;
        piece.id = tc.id;
        this.bytes += Buffer.byteLength(tc.id, 'utf8');
      }
      const fn = tc.function;
      if (fn != null && typeof fn !== 'object')
        throw malformedReply('a tool call’s function is not an object');
      if (typeof fn?.name === 'string' && fn.name !== '') {
        call.name = fn.name;
        piece.name = fn.name;
        this.bytes += Buffer.byteLength(fn.name, 'utf8');
      }
      const args = argumentsText(fn?.arguments);
      if (args !== undefined) {
        call.args = (call.args ?? '') + args;
        if (args !== '') piece.arguments = args;
        this.bytes += Buffer.byteLength(args, 'utf8');
      }
      if (piece.id !== undefined || piece.name !== undefined || piece.arguments !== undefined)
        out.push(piece);
    });
    return out.length > 0 ? out : undefined;
  }
}

/** A fragment of arguments as text: some servers send parsed objects (too deep: malformed). */
function argumentsText(args: unknown): string | undefined {
  if (args === undefined || args === null) return undefined;
  if (typeof args === 'string') return args;
  try {
    return JSON.stringify(args) ?? undefined;
  } catch {
    throw malformedReply('a tool call’s arguments nest too deeply');
  }
}
