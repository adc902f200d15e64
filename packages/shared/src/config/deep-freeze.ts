import { isTypeBoxType } from '../plan/declared-schema.js';

/**
 * Freezes a config tree in place, all the way down. TypeBox types (from a mesh.config.ts) are left
 * as they are: they belong to the user's module, which may still compose them.
 */
export function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || isTypeBoxType(value)) return value;
  for (const child of Object.values(value)) deepFreeze(child);
  return Object.freeze(value);
}
