import { MeshError, type ModelConfig, type ModelReply } from '@agentmesh/shared';
import { type Dispatcher, request } from 'undici';
import { abortableSleep } from '../abortable-sleep.js';
import { timeoutSignal } from '../timeout-signal.js';
import { traceChat } from '../tracing.js';
import type { ChatModel, ChatRequest } from './chat-model.js';
import { classifyHttpError, isRetryableStatus, retryAfterMs } from './classify-http-error.js';
import { parseChatCompletion } from './parse-chat-completion.js';
import { readCappedBody } from './read-capped-body.js';

/** Retry policy of model calls: exponential backoff with jitter, within the invocation deadline. */
export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 250, maxDelayMs: 8000 };

/** The default bound of a reply body (`MESH_MAX_MODEL_REPLY_BYTES`, DESIGN §16). */
const DEFAULT_MAX_REPLY_BYTES = 4 * 1024 * 1024;

/** A Chat Completions client for any OpenAI-compatible endpoint (OpenAI, Ollama, vLLM, llama.cpp). */
export class OpenAIChatModel implements ChatModel {
  constructor(
    private readonly config: ModelConfig,
    private readonly dispatcher?: Dispatcher,
    private readonly retry: RetryPolicy = DEFAULT_RETRY,
    private readonly maxReplyBytes: number = DEFAULT_MAX_REPLY_BYTES,
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
    });
    for (let attempt = 1; ; attempt++) {
      const remaining = req.deadline - Date.now();
      if (remaining <= 0) throw new MeshError('deadline_exceeded');
      const timeout = Math.min(remaining, this.config.timeoutMs ?? 120_000);
      let status: number;
      let text: string;
      let over: boolean;
      let retryAfter: number | undefined;
      const bounded = timeoutSignal(req.signal, timeout);
      try {
        const res = await request(`${this.config.baseUrl.replace(/\/$/, '')}/chat/completions`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...traceHeaders,
            ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}),
          },
          body,
          signal: bounded.signal,
          ...(this.dispatcher ? { dispatcher: this.dispatcher } : {}),
        });
        status = res.statusCode;
        ({ text, over } = await readCappedBody(res.body, this.maxReplyBytes, res.headers['content-length']));
        retryAfter = retryAfterMs(res.headers['retry-after']);
      } catch (e) {
        if (req.signal.aborted) throw req.signal.reason ?? e;
        if (attempt >= this.retry.maxAttempts) {
          // The network's words (ECONNREFUSED with an address) go to the log as the cause only.
          const error = new MeshError('model_unavailable', 'The model endpoint did not answer.');
          error.cause = e;
          throw error;
        }
        await this.backoff(attempt, undefined, req);
        continue;
      } finally {
        bounded.clear();
      }
      if (status >= 200 && status < 300) {
        // Like any malformed reply, not retried: the same prompt would likely bring it again.
        if (over)
          throw new MeshError('invalid_model_reply', `The model reply exceeds ${this.maxReplyBytes} bytes.`);
        return parseChatCompletion(text);
      }
      const error = classifyHttpError(status, text);
      if (!isRetryableStatus(status) || attempt >= this.retry.maxAttempts) throw error;
      await this.backoff(attempt, retryAfter, req);
    }
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
