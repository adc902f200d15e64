import type { ChatMessage } from './chat-message.js';
import { MAX_CALL_TOKENS, type TokenCounts, tokenCount } from './reported-usage.js';

/** What a model call is charged: its counts, `estimated` when the reply reported none. */
export interface ChargedUsage extends TokenCounts {
  estimated?: true;
}

// Bytes per token of the estimate: about four for English text and JSON with common tokenizers.
const BYTES_PER_TOKEN = 4;

/**
 * What one model call adds to its invocation's usage and its tree's budget (docs/guides/approvals-and-budgets.md, docs/reference/bounds.md): the
 * reply's counts, each clamped again to an integer in [0, MAX_CALL_TOKENS] whatever client made
 * them. With `estimate` (the tree has a budget), a reply that counts no token at all (no usage, or
 * zeros) is charged the estimate instead: a model that reports nothing must not run for free.
 */
export function chargedUsage(usage: TokenCounts, estimate?: () => TokenCounts): ChargedUsage {
  const counts = {
    promptTokens: tokenCount(usage.promptTokens) ?? 0,
    completionTokens: tokenCount(usage.completionTokens) ?? 0,
  };
  if (!estimate || counts.promptTokens + counts.completionTokens > 0) return counts;
  return { ...estimate(), estimated: true };
}

/**
 * A model call's tokens guessed from its bytes (UTF-8, a token per four, at least one each): the
 * messages it was sent, and the text and tool calls of its reply.
 */
export function estimateUsage(
  messages: readonly ChatMessage[],
  reply: { content: string | null; toolCalls: readonly { name: string; arguments: string }[] },
): TokenCounts {
  const tokens = (bytes: number) =>
    Math.min(MAX_CALL_TOKENS, Math.max(1, Math.ceil(bytes / BYTES_PER_TOKEN)));
  let out = Buffer.byteLength(reply.content ?? '', 'utf8');
  for (const c of reply.toolCalls)
    out += Buffer.byteLength(c.name, 'utf8') + Buffer.byteLength(c.arguments, 'utf8');
  return {
    promptTokens: tokens(Buffer.byteLength(JSON.stringify(messages), 'utf8')),
    completionTokens: tokens(out),
  };
}
