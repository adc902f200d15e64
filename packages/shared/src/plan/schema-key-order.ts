/**
 * The canonical order of keys in a derived schema object: these first, in this order, then every
 * other key alphabetically. Property names inside `properties` keep their declared order. A YAML
 * mapping written in this order serializes byte-identically to the same TypeBox declaration.
 */
export const SCHEMA_KEY_ORDER: readonly string[] = [
  'type',
  'format',
  'title',
  'description',
  'enum',
  'const',
  'default',
  'items',
  'properties',
  'required',
  'additionalProperties',
];

const rank = new Map(SCHEMA_KEY_ORDER.map((k, i) => [k, i]));

/** Sorts the keys of one schema object into the canonical order. */
export function orderSchemaKeys(keys: Iterable<string>): string[] {
  return [...keys].sort((a, b) => {
    const ra = rank.get(a) ?? SCHEMA_KEY_ORDER.length;
    const rb = rank.get(b) ?? SCHEMA_KEY_ORDER.length;
    if (ra !== rb) return ra - rb;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}
