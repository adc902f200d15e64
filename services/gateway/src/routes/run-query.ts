import type { JsonSchema } from '@agentmesh/shared';

/** The largest `?budget` (docs/guides/approvals-and-budgets.md). */
export const MAX_BUDGET_TOKENS = 1_000_000_000;

/**
 * The query parameters of every operation that starts a root invocation (invoke, fork): `wait`,
 * `timeout`, `budget`, typed numbers (the validator reads the query's digits as such).
 */
export function runQueryProperties(
  defaultTimeoutSeconds: number,
  maxTimeoutSeconds: number,
): Record<string, JsonSchema> {
  return {
    wait: {
      type: 'number',
      minimum: 0,
      maximum: 300,
      default: 30,
      description:
        'Seconds to wait for a terminal state: 200 with the finished view within it, else 202 with `Location`. ' +
        'The wait also ends at once when some node of the tree waits on a human decision (202; the node lists ' +
        'it in `pendingApprovals`, and `GET /approvals` lists it).',
    },
    timeout: {
      type: 'integer',
      minimum: 1,
      maximum: maxTimeoutSeconds,
      default: defaultTimeoutSeconds,
      description: 'The invocation deadline in whole seconds; its sub-agents inherit what remains.',
    },
    budget: {
      type: 'integer',
      minimum: 1,
      maximum: MAX_BUDGET_TOKENS,
      description:
        "The token budget (prompt + completion) of the whole invocation tree; with the agent's `maxTokens`, the smaller wins.",
    },
  };
}

/** `wait`, `timeout` and `budget` as validated, with their defaults. */
export function runQueryOf(
  query: { wait?: number; timeout?: number; budget?: number },
  defaultTimeoutSeconds: number,
): { waitMs: number; timeoutMs: number; budget: number | undefined } {
  return {
    waitMs: (query.wait ?? 30) * 1000,
    timeoutMs: (query.timeout ?? defaultTimeoutSeconds) * 1000,
    budget: query.budget,
  };
}
