import type { JsonSchema } from '../plan/types.js';
import { narrowToSchema } from './narrow-to-schema.js';
import { isPlainObject, normalizeResult } from './normalize-result.js';
import { absorbStackOverflow, RESULT_ROOT, ResultNormalizationError } from './result-normalization-error.js';

/**
 * Normalizes a result through its declared output schema: class instances read as plain data,
 * undeclared properties dropped, then the untyped check again. A null schema is the untyped path.
 */
export function normalizeTypedResult(value: unknown, schema: JsonSchema | null): unknown {
  // Declaring nothing is exactly the untyped path (upstream contract 49,
  // docs/reference/upstream-contracts.md): a class instance is refused.
  if (schema === null) return normalizeResult(value);
  // The check runs again on the narrowed copy, so a declared type still refuses Infinity.
  return absorbStackOverflow(() =>
    normalizeResult(narrowToSchema(readAsPlainData(value, RESULT_ROOT, new Set()), schema)),
  );
}

/**
 * True for an instance of a user class: `[object Object]` rules out built-ins (Date, typed arrays,
 * Set, RegExp, Error, boxed primitives…), which stay refused on the typed path too.
 */
function isClassInstance(value: object): boolean {
  return (
    !Array.isArray(value) &&
    !isPlainObject(value) &&
    !(value instanceof Map) &&
    Object.prototype.toString.call(value) === '[object Object]'
  );
}

// Copies arrays, plain objects, string-keyed Maps and class instances (own enumerable properties,
// as Jackson's convertValue and pydantic's dump do) into plain containers; leaves every other
// value, including a Map with a non-string key, for normalizeResult to judge. A cycle is refused
// here with the same path and message as the untyped walk (Jackson and pydantic refuse one too,
// even in a part narrowing would drop); a diamond is copied twice.
function readAsPlainData(value: unknown, path: string, onPath: Set<object>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const entries = Array.isArray(value) ? [] : entriesOf(value);
  if (entries === null) return value;
  if (onPath.has(value)) throw ResultNormalizationError.cycle(path);
  onPath.add(value);
  let copy: unknown;
  if (Array.isArray(value)) {
    const items: unknown[] = [];
    for (let i = 0; i < value.length; i++) items.push(readAsPlainData(value[i], `${path}[${i}]`, onPath));
    copy = items;
  } else {
    // fromEntries defines own properties, so a `__proto__` key stays data.
    copy = Object.fromEntries(
      entries.map(([key, child]) => [key, readAsPlainData(child, `${path}.${key}`, onPath)]),
    );
  }
  onPath.delete(value);
  return copy;
}

/** The entries a container reads as, or null for a value that is not read (built-ins, odd Maps). */
function entriesOf(value: object): [string, unknown][] | null {
  if (value instanceof Map) {
    for (const key of value.keys()) if (typeof key !== 'string') return null;
    return [...(value as Map<string, unknown>)];
  }
  if (isPlainObject(value) || isClassInstance(value)) return Object.entries(value);
  return null;
}
