import type { JsonSchema } from './types.js';

/**
 * The input schema of a ReAct agent that declares none: one string `prompt` and nothing else,
 * exactly upstream's `SUBAGENT_INPUT_SCHEMA` (contract 20 in docs/reference/upstream-contracts.md).
 * Frozen: copy before changing it.
 */
export const DEFAULT_INPUT_SCHEMA: Readonly<JsonSchema> = Object.freeze({
  type: 'object',
  properties: Object.freeze({ prompt: Object.freeze({ type: 'string' }) }),
  required: Object.freeze(['prompt']),
  additionalProperties: false,
});

/** A fresh, mutable copy of DEFAULT_INPUT_SCHEMA, for a plan entry. */
export function defaultInputSchema(): JsonSchema {
  return structuredClone(DEFAULT_INPUT_SCHEMA) as JsonSchema;
}
