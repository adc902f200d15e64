/** Why a value is not JSON, and where (`#/properties/lines/default`). */
export class NotJsonError extends Error {
  constructor(
    readonly at: string,
    readonly reason: string,
  ) {
    super(`${reason} at ${at}`);
    this.name = 'NotJsonError';
  }
}

/**
 * A deep copy of JSON data that keeps key order and refuses anything JSON cannot express
 * (undefined outside an object property, functions, symbols, bigint, non-finite numbers, class instances, cycles).
 */
export function copyJson(value: unknown, at = '#', ancestors: Set<object> = new Set()): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new NotJsonError(at, `non-finite number ${value}`);
    return value;
  }
  if (typeof value !== 'object') throw new NotJsonError(at, `a ${typeof value} value`);
  if (ancestors.has(value)) throw new NotJsonError(at, 'a value that contains itself');
  ancestors.add(value);
  try {
    if (Array.isArray(value)) return value.map((v, i) => copyJson(v, `${at}/${i}`, ancestors));
    if (!isPlainObject(value))
      throw new NotJsonError(at, `a ${value.constructor?.name ?? 'non-plain'} object`);
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      // a property whose value is undefined is dropped, as JSON.stringify does
      if (v !== undefined) out[k] = copyJson(v, `${at}/${escapePointer(k)}`, ancestors);
    }
    return out;
  } finally {
    ancestors.delete(value);
  }
}

/** True for `{}` literals and `Object.create(null)`: what YAML and JSON.parse produce. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** RFC 6901 escaping of one JSON-pointer segment. */
export function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
