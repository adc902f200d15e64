/** Model-produced tool-call arguments parsed, or the reason they are refused. */
export type ParsedJsonObject = { ok: true; value: Record<string, unknown> } | { ok: false; reason: string };

/**
 * Upstream's reason for arguments that parse but are not a JSON object (upstream contract 39,
 * docs/reference/upstream-contracts.md).
 */
export const NOT_AN_OBJECT_REASON = 'INVALID_ARGUMENT /: type (expected object)';

/**
 * Parses a model's tool-call arguments, which must be one JSON object; the reason of a refusal
 * goes back to the model, so it names the parse error.
 */
export function parseJsonObject(text: string): ParsedJsonObject {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, reason: `INVALID_ARGUMENT /: invalid JSON (${(e as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: NOT_AN_OBJECT_REASON };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
