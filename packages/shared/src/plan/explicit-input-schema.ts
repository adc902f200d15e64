import { MeshError } from '../errors/mesh-error.js';
import { explicitSchema } from './explicit-schema.js';
import type { JsonSchema } from './types.js';

/**
 * An explicit sub-agent input schema, kept verbatim; it must describe a JSON object
 * (`"type":"object"`), since a model's tool arguments always are one (upstream contract 21,
 * docs/reference/upstream-contracts.md).
 */
export function explicitInputSchema(value: unknown): JsonSchema {
  const schema = explicitSchema(value, 'input');
  if (schema.type !== 'object') {
    throw new MeshError('invalid_config', 'Sub-agent input schema must describe a JSON object.');
  }
  return schema;
}
