import type { InvocationView } from '@agentmesh/shared';

/** OpenAI's usage object. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The id of a completion: the invocation's, so `GET /invocations/{id}` is one step away. */
export const completionId = (invocationId: string) => `chatcmpl-${invocationId}`;

/** Seconds since the epoch of an ISO time (OpenAI's `created`). */
export const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

/** The text of a root's output: text as it is, anything structured as its JSON. */
export function outputText(output: unknown): string {
  return typeof output === 'string' ? output : JSON.stringify(output ?? null);
}

/** The usage of the whole tree (every model call of the root and of its sub-agents). */
export function treeUsageOf(view: InvocationView): ChatUsage {
  const { promptTokens, completionTokens } = view.treeUsage;
  return {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
  };
}

/** The `chat.completion` of a succeeded invocation (docs/guides/openai-compatible.md). */
export function chatCompletion(view: InvocationView) {
  return {
    id: completionId(view.id),
    object: 'chat.completion' as const,
    created: epochSeconds(view.createdAt),
    model: view.agent,
    choices: [
      {
        index: 0,
        message: { role: 'assistant' as const, content: outputText(view.output), refusal: null },
        logprobs: null,
        finish_reason: 'stop' as const,
      },
    ],
    usage: treeUsageOf(view),
  };
}

/** One `chat.completion.chunk` of a streamed answer. */
export function chatChunk(
  view: Pick<InvocationView, 'id' | 'agent' | 'createdAt'>,
  choice: { delta: { role?: 'assistant'; content?: string }; finish_reason: 'stop' | null } | undefined,
  usage?: ChatUsage,
) {
  return {
    id: completionId(view.id),
    object: 'chat.completion.chunk' as const,
    created: epochSeconds(view.createdAt),
    model: view.agent,
    choices: choice ? [{ index: 0, ...choice, logprobs: null }] : [],
    ...(usage ? { usage } : {}),
  };
}
