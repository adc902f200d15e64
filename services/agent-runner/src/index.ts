// The runner's embeddable parts: tests start runners in-process.
export type { ChatModel, ChatRequest } from './model/chat-model.js';
export { classifyHttpError, isRetryableStatus, retryAfterMs } from './model/classify-http-error.js';
export { OpenAIChatModel, type RetryPolicy } from './model/openai-chat-model.js';
export { parseChatCompletion } from './model/parse-chat-completion.js';
export { buildRunner, type Runner, type RunnerOptions } from './runner.js';
