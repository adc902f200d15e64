import { Kind } from '@sinclair/typebox';

/** True for a TypeBox type (it carries the `Kind` symbol): such values are kept as they are, never walked. */
export function isTypeBoxType(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Kind in value;
}

/** True for a mapping (a plain object, not an array and not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
