import { Kind, type TSchema } from '@sinclair/typebox';
import { deriveInputSchema } from './derive-input-schema.js';
import { deriveSchema } from './derive-schema.js';
import { explicitInputSchema } from './explicit-input-schema.js';
import { explicitSchema, type SchemaRole } from './explicit-schema.js';
import type { JsonSchema } from './types.js';

/**
 * The schema of one declaration: a TypeBox type is derived (an input that is not an object has no
 * shape: null); a plain object or a JSON string is explicit and kept verbatim.
 */
export function declaredSchema(value: unknown, role: SchemaRole): JsonSchema | null {
  if (isTypeBoxType(value))
    return role === 'input' ? deriveInputSchema(value) : deriveSchema(value, 'output');
  return role === 'input' ? explicitInputSchema(value) : explicitSchema(value, 'output');
}

/** True for a TypeBox type: it carries TypeBox's `Kind` symbol, which a YAML mapping never does. */
export function isTypeBoxType(value: unknown): value is TSchema {
  return (
    typeof value === 'object' && value !== null && typeof (value as { [Kind]?: unknown })[Kind] === 'string'
  );
}

/**
 * Of several declarations in precedence order (absent ones undefined or null), the one that counts:
 * the first explicit schema wins over every type (upstream contract 5,
 * docs/reference/upstream-contracts.md), else the first TypeBox type.
 */
export function pickDeclaration(candidates: readonly unknown[]): unknown {
  const present = candidates.filter((c) => c !== undefined && c !== null);
  return present.find((c) => !isTypeBoxType(c)) ?? present[0];
}
