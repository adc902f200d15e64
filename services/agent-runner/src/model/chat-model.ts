import type { Callable, ChatMessage, ModelReply } from '@agentmesh/shared';

/** One request to a chat model. */
export interface ChatRequest {
  messages: ChatMessage[];
  tools: Callable[];
  signal: AbortSignal;
  /** Give up (and stop retrying) at this epoch-ms instant. */
  deadline: number;
  /** The invocation's W3C traceparent, sent as is while tracing is off (DESIGN §9). */
  traceparent?: string | undefined;
}

/** What the ReAct loop sees of a model provider; the OpenAI-compatible client is one adapter. */
export interface ChatModel {
  complete(request: ChatRequest): Promise<ModelReply>;
}
