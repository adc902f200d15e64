import { MeshError } from '../errors/mesh-error.js';
import { copyJson, isPlainObject } from './copy-json.js';
import type { JsonSchema } from './types.js';

/** Which declaration a schema belongs to; it names the schema in error messages. */
export type SchemaRole = 'input' | 'output';

/**
 * An explicitly declared JSON Schema (a plain object, or a string parsed as JSON), kept verbatim:
 * same keys, same order, nothing added (upstream contract 5, docs/reference/upstream-contracts.md).
 * Throws `invalid_config`.
 */
export function explicitSchema(value: unknown, role: SchemaRole = 'output'): JsonSchema {
  const what = `Sub-agent ${role} schema`;
  let parsed: unknown = value;
  if (typeof value === 'string') {
    if (value.trim() === '') throw new MeshError('invalid_config', `${what} must not be blank.`);
    try {
      // JSON.parse refuses trailing tokens, as upstream's parser does (contract 21)
      parsed = JSON.parse(value);
    } catch {
      throw new MeshError('invalid_config', `${what} must be valid JSON.`);
    }
  }
  if (!isPlainObject(parsed)) throw new MeshError('invalid_config', notAnObject(role));
  try {
    return copyJson(parsed) as JsonSchema;
  } catch {
    throw new MeshError('invalid_config', `${what} must be valid JSON.`);
  }
}

/** The message for a declaration that is not a schema object at all. */
function notAnObject(role: SchemaRole): string {
  return role === 'input'
    ? 'Sub-agent input schema must describe a JSON object.'
    : 'Sub-agent output schema must be a JSON Schema object.';
}
