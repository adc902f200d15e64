import type { JsonSchema } from '../plan/types.js';
import { isPlainObject } from './normalize-result.js';

/**
 * Returns a copy of `value` with every object property its schema's `properties` does not list
 * dropped, recursing through `properties` and array `items`; never mutates `value`.
 */
export function narrowToSchema(value: unknown, schema: JsonSchema | null): unknown {
  // What is not walked keeps its value as is (shared, not copied): a schema without `properties`
  // or `items`, `items` as a tuple array, `prefixItems`, `anyOf`/`oneOf`/`allOf`/`not`, `if`/`then`,
  // `$ref`/`$defs`, `patternProperties`. Narrowing is the typed read of upstream contract 49
  // (docs/reference/upstream-contracts.md: extra fields dropped even without `additionalProperties: false`),
  // not validation.
  if (schema === null) return value;
  if (Array.isArray(value)) return narrowArray(value, schema);
  if (isPlainObject(value)) return narrowObject(value, schema);
  return value;
}

function narrowObject(value: Record<string, unknown>, schema: JsonSchema): Record<string, unknown> {
  const properties = schema['properties'];
  if (!isPlainObject(properties)) return { ...value };
  // An `additionalProperties` schema declares the extra entries: they stay, as a map schema's do.
  const keepsExtras = isPlainObject(schema['additionalProperties']);
  const entries: [string, unknown][] = [];
  for (const [key, child] of Object.entries(value)) {
    const declared = Object.hasOwn(properties, key) ? properties[key] : undefined;
    if (isPlainObject(declared)) entries.push([key, narrowToSchema(child, declared)]);
    else if (declared === true || keepsExtras) entries.push([key, child]);
  }
  // fromEntries defines own properties, so a `__proto__` key stays data.
  return Object.fromEntries(entries);
}

function narrowArray(value: unknown[], schema: JsonSchema): unknown[] {
  const items = schema['items'];
  if (!isPlainObject(items)) return [...value];
  const copy: unknown[] = [];
  for (let i = 0; i < value.length; i++) copy.push(narrowToSchema(value[i], items));
  return copy;
}
