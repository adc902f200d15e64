import type { TSchema } from '@sinclair/typebox';
import { deriveSchema } from './derive-schema.js';
import type { JsonSchema } from './types.js';

/**
 * The derived input schema of a TypeBox type, or null ("no shape") when it does not render as
 * `"type":"object"` — a model's tool arguments are always an object (upstream contract 6 in
 * docs/reference/upstream-contracts.md: a `String` input type gives null).
 */
export function deriveInputSchema(type: TSchema): JsonSchema | null {
  const schema = deriveSchema(type, 'input');
  return schema.type === 'object' ? schema : null;
}
