import {
  DEFAULT_MAX_MODEL_REPLY_BYTES,
  DEFAULT_MODEL_IDLE_SECONDS,
  MeshError,
  type ModelConfig,
  type ModelReply,
} from '@agentmesh/shared';
import { type Dispatcher, request } from 'undici';
import { abortableSleep } from '../abortable-sleep.js';
import { type IdleSignal, idleSignal } from '../idle-signal.js';
import { traceChat } from '../tracing.js';
import type { ChatModel, ChatRequest, ReplyDelta } from './chat-model.js';
import { classifyHttpError, isRetryableStatus, retryAfterMs } from './classify-http-error.js';
import { parseChatCompletion, replyTooLarge } from './parse-chat-completion.js';
import { readCappedBody } from './read-capped-body.js';
import { readStreamedReply } from './read-streamed-reply.js';
import { ModelStreamError } from './streamed-reply.js';

/** Retry policy of model calls: exponential backoff with jitter, within the invocation deadline. */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** The retry policy of a runner's model calls; its first delay is the runner limit `modelRetryMs`. */
export const DEFAULT_MODEL_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 250, maxDelayMs: 8000 };

/** Whether a response's content type is an event stream (a streamed reply); JSON is one answer. */
const isEventStream = (type: string | string[] | undefined) =>
  (Array.isArray(type) ? type[0] : type)?.toLowerCase().startsWith('text/event-stream') === true;

/** An attempt's answer: the reply, or a failure status to classify (and maybe retry). */
type Answer = { reply: ModelReply } | { status: number; text: string; retryAfter: number | undefined };

/**
 * A Chat Completions client for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp).
 * It asks for a streamed reply unless the model entry says `stream: false`, hands each piece to the
 * request's listener as it arrives, and returns the same reply either way (docs/guides/streaming.md).
 */
export class OpenAIChatModel implements ChatModel {
  constructor(
    private readonly config: ModelConfig,
    private readonly dispatcher?: Dispatcher,
    private readonly retry: RetryPolicy = DEFAULT_MODEL_RETRY,
    /** `MESH_MAX_MODEL_REPLY_BYTES` (docs/reference/bounds.md). */
    private readonly maxReplyBytes: number = DEFAULT_MAX_MODEL_REPLY_BYTES,
    /** `MESH_MODEL_IDLE_SECONDS` in ms: how long an attempt may receive nothing. */
    private readonly idleMs: number = DEFAULT_MODEL_IDLE_SECONDS * 1000,
  ) {}

  /** One model call in its `chat <model>` span, the trace headers sent with every attempt. */
  complete(req: ChatRequest): Promise<ModelReply> {
    return traceChat(this.config, req.traceparent, (headers) => this.send(req, headers));
  }

  private async send(req: ChatRequest, traceHeaders: Record<string, string>): Promise<ModelReply> {
    const body = JSON.stringify({
      model: this.config.model,
      messages: req.messages,
      ...(req.tools.length > 0 ? { tools: req.tools.map((f) => ({ type: 'function', function: f })) } : {}),
      ...(this.config.stream === false ? {} : { stream: true, stream_options: { include_usage: true } }),
    });
    for (let attempt = 1; ; attempt++) {
      const remaining = req.deadline - Date.now();
      if (remaining <= 0) throw new MeshError('deadline_exceeded');
      // What the listener heard of the failed attempt is void: the call starts over.
      if (attempt > 1) req.listener?.restart();
      const timeout = Math.min(remaining, this.config.timeoutMs ?? 120_000);
      // A non-streamed answer says nothing until it is whole: only `timeoutMs` bounds it.
      const idle = idleSignal(req.signal, timeout, this.config.stream === false ? undefined : this.idleMs);
      let answer: Answer;
      try {
        answer = await this.attempt(req, body, traceHeaders, idle);
      } catch (e) {
        if (req.signal.aborted) throw req.signal.reason ?? e;
        // Like any malformed or oversized reply, not retried: the same prompt would likely bring it again.
        if (e instanceof MeshError) throw e;
        if (attempt >= this.retry.maxAttempts) throw this.givenUp(e, idle.idled);
        await this.backoff(attempt, undefined, req);
        continue;
      } finally {
        idle.clear();
      }
      if ('reply' in answer) return answer.reply;
      const error = classifyHttpError(answer.status, answer.text);
      if (!isRetryableStatus(answer.status) || attempt >= this.retry.maxAttempts) throw error;
      await this.backoff(attempt, answer.retryAfter, req);
    }
  }

  /** One request and its answer, every byte of which restarts the idle clock. */
  private async attempt(
    req: ChatRequest,
    body: string,
    traceHeaders: Record<string, string>,
    idle: IdleSignal,
  ): Promise<Answer> {
    const res = await request(`${this.config.baseUrl.replace(/\/$/, '')}/chat/completions`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...traceHeaders,
        ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}),
      },
      body,
      signal: idle.signal,
      ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
    });
    idle.touch();
    const length = res.headers['content-length'];
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const { text } = await readCappedBody(res.body, this.maxReplyBytes, length, idle.touch);
      return { status: res.statusCode, text, retryAfter: retryAfterMs(res.headers['retry-after']) };
    }
    if (isEventStream(res.headers['content-type'])) {
      return { reply: await readStreamedReply(res.body, this.maxReplyBytes, req.listener, idle.touch) };
    }
    // A provider that does not stream answers one JSON completion: one delta.
    const { text, over } = await readCappedBody(res.body, this.maxReplyBytes, length, idle.touch);
    if (over) throw replyTooLarge(this.maxReplyBytes);
    const reply = parseChatCompletion(text);
    req.listener?.delta(wholeReply(reply));
    return { reply };
  }

  /** The error of a call whose every attempt failed without an answer. */
  private givenUp(e: unknown, idled: boolean): MeshError {
    if (idled) {
      return new MeshError(
        'model_timeout',
        `The model endpoint sent nothing for ${Math.round(this.idleMs / 1000)} s.`,
      );
    }
    if (e instanceof ModelStreamError) return new MeshError('model_unavailable', e.message);
    // The network's words (ECONNREFUSED with an address) go to the log as the cause only.
    const error = new MeshError('model_unavailable', 'The model endpoint did not answer.');
    error.cause = e;
    return error;
  }

  private async backoff(attempt: number, retryAfter: number | undefined, req: ChatRequest): Promise<void> {
    const exp = Math.min(this.retry.maxDelayMs, this.retry.baseDelayMs * 2 ** (attempt - 1));
    const delay = retryAfter ?? exp / 2 + Math.random() * (exp / 2);
    if (Date.now() + delay >= req.deadline) {
      throw new MeshError(
        'deadline_exceeded',
        'The invocation ran past its deadline while retrying the model.',
      );
    }
    await abortableSleep(delay, req.signal);
  }
}

/** A whole (non-streamed) reply as the one delta it makes. */
function wholeReply(reply: ModelReply): ReplyDelta {
  return {
    ...(reply.content ? { content: reply.content } : {}),
    ...(reply.toolCalls.length > 0
      ? {
          toolCalls: reply.toolCalls.map((c, index) => ({
            index,
            ...(c.id ? { id: c.id } : {}),
            name: c.name,
            ...(c.arguments ? { arguments: c.arguments } : {}),
          })),
        }
      : {}),
  };
}
