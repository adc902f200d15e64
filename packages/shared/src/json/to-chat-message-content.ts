/**
 * Renders a normalized result as the text of a tool message: a string as is (never JSON-quoted),
 * null as `null`, objects and arrays as compact JSON in their key order, anything else `String(v)`.
 */
export function toChatMessageContent(value: unknown): string {
  // Upstream contract 51 (docs/reference/upstream-contracts.md): `"done"` → `done`, `7` → `7`,
  // `{a: 1}` → `{"a":1}`, null → `null`.
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return value;
  if (typeof value === 'object') {
    // A normalized result always stringifies; `undefined` only comes back for exotic input.
    const json: string | undefined = JSON.stringify(value);
    return json ?? String(value);
  }
  return String(value);
}
