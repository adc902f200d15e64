/** What one model call counts for: its prompt and completion tokens. */
export interface TokenCounts {
  promptTokens: number;
  completionTokens: number;
}

/**
 * The most tokens one count (prompt or completion) of one model call is taken for (docs/reference/bounds.md): as
 * much as the largest budget (`?budget` ≤ 1,000,000,000), so a call reported past it spends any
 * budget, and far inside what Redis's integer counters (and a JavaScript number) hold exactly.
 */
export const MAX_CALL_TOKENS = 1_000_000_000;

/** A count as the mesh keeps it: an integer in [0, MAX_CALL_TOKENS]; undefined for what is no number. */
export function tokenCount(value: unknown): number | undefined {
  if (typeof value !== 'number' || Number.isNaN(value)) return undefined;
  // JSON.parse reads 1e999 as Infinity: past the bound, like 1e308. Negatives count nothing.
  return Math.min(MAX_CALL_TOKENS, Math.max(0, Math.trunc(value)));
}

/**
 * The token counts of a provider's `usage` object (OpenAI's names), fit to be added to Redis
 * counters: each an integer in [0, MAX_CALL_TOKENS] (negatives count 0, fractions are cut, a huge
 * or infinite number is the bound). `total_tokens` stands in for the parts it reports without:
 * alone it is the prompt's; beside one part, the other is what it leaves. Anything that is no
 * number (a string, null, an object) counts as absent. Undefined when no count is usable at all:
 * the reply reported no usage.
 */
export function reportedUsage(raw: unknown): TokenCounts | undefined {
  if (typeof raw !== 'object' || raw === null) return undefined;
  const usage = raw as { prompt_tokens?: unknown; completion_tokens?: unknown; total_tokens?: unknown };
  const prompt = tokenCount(usage.prompt_tokens);
  const completion = tokenCount(usage.completion_tokens);
  const total = tokenCount(usage.total_tokens);
  if (prompt === undefined && completion === undefined) {
    return total === undefined ? undefined : { promptTokens: total, completionTokens: 0 };
  }
  const rest = (part: number) => (total === undefined ? 0 : Math.max(0, total - part));
  return {
    promptTokens: prompt ?? rest(completion ?? 0),
    completionTokens: completion ?? rest(prompt ?? 0),
  };
}
