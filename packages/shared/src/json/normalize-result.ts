import { absorbStackOverflow, RESULT_ROOT, ResultNormalizationError } from './result-normalization-error.js';

/** True for an object JSON reads as a map: its prototype is `Object.prototype` or null. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** Returns a clean JSON copy of an untyped result, or throws a ResultNormalizationError naming the path. */
export function normalizeResult(value: unknown): unknown {
  return absorbStackOverflow(() => walk(value, RESULT_ROOT, new Set()));
}

// `onPath` holds the containers between the root and the current value only: a container is
// added on the way in and removed on the way out, so a diamond (one object under two siblings)
// is legal and copied twice, while `m.self = m` is a cycle (upstream contract 47,
// docs/reference/upstream-contracts.md). No `finally`: any throw abandons the whole walk.
function walk(value: unknown, path: string, onPath: Set<object>): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      if (!Number.isFinite(value)) throw ResultNormalizationError.nonFinite(path);
      return value;
    case 'object':
      if (value === null) return null;
      return walkObject(value, path, onPath);
    default:
      // bigint, function, symbol, and undefined where JSON has no way to drop it (array, root).
      throw ResultNormalizationError.unsupported(path, typeof value);
  }
}

function walkObject(value: object, path: string, onPath: Set<object>): unknown {
  const isContainer = Array.isArray(value) || value instanceof Map || isPlainObject(value);
  if (!isContainer) throw ResultNormalizationError.unsupported(path, typeNameOf(value));
  if (onPath.has(value)) throw ResultNormalizationError.cycle(path);
  onPath.add(value);
  let copy: unknown;
  if (Array.isArray(value)) {
    // An index loop, not map(): a hole must be visited (and refused as undefined), not skipped.
    const items: unknown[] = [];
    for (let i = 0; i < value.length; i++) items.push(walk(value[i], `${path}[${i}]`, onPath));
    copy = items;
  } else if (value instanceof Map) {
    copy = walkMap(value, path, onPath);
  } else {
    const entries: [string, unknown][] = [];
    for (const [key, child] of Object.entries(value)) {
      // Dropped as JSON.stringify drops it; a function property is refused instead.
      if (child !== undefined) entries.push([key, walk(child, `${path}.${key}`, onPath)]);
    }
    // fromEntries defines own properties, so a `__proto__` key stays data.
    copy = Object.fromEntries(entries);
  }
  onPath.delete(value);
  return copy;
}

function walkMap(map: Map<unknown, unknown>, path: string, onPath: Set<object>): Record<string, unknown> {
  for (const key of map.keys()) {
    if (typeof key !== 'string') throw ResultNormalizationError.nonStringKey(path);
  }
  const entries: [string, unknown][] = [];
  for (const [key, child] of map as Map<string, unknown>) {
    if (child !== undefined) entries.push([key, walk(child, `${path}.${key}`, onPath)]);
  }
  return Object.fromEntries(entries);
}

/** The type a refusal names: the constructor (`Date`, `Uint8Array`, `Buffer`, `Review`), else `object`. */
function typeNameOf(value: object): string {
  const proto: unknown = Object.getPrototypeOf(value);
  const ctor: unknown = typeof proto === 'object' && proto !== null ? proto.constructor : undefined;
  return typeof ctor === 'function' && ctor.name !== '' ? ctor.name : 'object';
}
