import type { Callable, ChatMessage, ModelReply, ToolCallDelta } from '@agentmesh/shared';

/** A piece of a model reply as it streams in: text added, and tool-call fragments by index. */
export interface ReplyDelta {
  content?: string;
  toolCalls?: ToolCallDelta[];
}

/**
 * Who hears a reply as it is written (docs/guides/streaming.md): each delta, and `restart()` when
 * the call is sent again (a retry), so what was heard of the failed attempt is to be discarded.
 */
export interface ReplyListener {
  delta(d: ReplyDelta): void;
  restart(): void;
}

/** One request to a chat model. */
export interface ChatRequest {
  messages: ChatMessage[];
  tools: Callable[];
  signal: AbortSignal;
  /** Give up (and stop retrying) at this epoch-ms instant. */
  deadline: number;
  /** The invocation's W3C traceparent, sent as is while tracing is off (docs/reference/traces.md). */
  traceparent?: string | undefined;
  /** Hears the reply as it streams; the reply returned is the same whether anyone listens. */
  listener?: ReplyListener | undefined;
}

/** What the ReAct loop sees of a model provider; the OpenAI-compatible client is one adapter. */
export interface ChatModel {
  complete(request: ChatRequest): Promise<ModelReply>;
}
