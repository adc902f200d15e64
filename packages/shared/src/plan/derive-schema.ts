import { Kind, type TSchema } from '@sinclair/typebox';
import { MeshError } from '../errors/mesh-error.js';
import { isPlainObject } from './copy-json.js';
import type { SchemaRole } from './explicit-schema.js';
import { RenderFailure, renderType } from './render-type.js';
import type { JsonSchema } from './types.js';

/**
 * The canonical JSON Schema of a TypeBox type: plain JSON, TypeBox-private keys dropped, `required`
 * minus defaulted properties, bytes as string/binary, keys in SCHEMA_KEY_ORDER. Throws `invalid_config`
 * for a type JSON Schema cannot express or a self-referential one (upstream contracts 6 and 7 in
 * docs/reference/upstream-contracts.md).
 */
export function deriveSchema(type: TSchema, role: SchemaRole = 'input'): JsonSchema {
  try {
    return renderType(type);
  } catch (e) {
    if (e instanceof RenderFailure && e.selfReferential) throw selfReferential(type, role, e.reason);
    if (e instanceof RenderFailure) throw unrenderable(type, role, e.reason);
    // a graph deep or cyclic enough to overflow the stack: upstream catches StackOverflowError here
    if (e instanceof RangeError) throw selfReferential(type, role, 'rendering it overflowed the stack');
    throw e;
  }
}

function unrenderable(type: unknown, role: SchemaRole, reason: string): MeshError {
  return new MeshError(
    'invalid_config',
    `Sub-agent ${role} type ${describeType(type)} cannot be rendered as a JSON Schema. ` +
      `Declare an ${role} schema explicitly, or use an ${role} type whose fields are all ` +
      `JSON-Schema-renderable. Rendering it reported: ${reason}`,
  );
}

function selfReferential(type: unknown, role: SchemaRole, reason: string): MeshError {
  return new MeshError(
    'invalid_config',
    `Sub-agent ${role} type ${describeType(type)} is self-referential, so it cannot be rendered as a ` +
      `JSON Schema (${reason}). Declare an ${role} schema explicitly, or use an ${role} type without ` +
      'recursion.',
  );
}

/** Names a type for a message: its title or `$id`, its kind, and an object's property names. */
export function describeType(type: unknown): string {
  if (!isPlainObject(type)) return type === null ? 'null' : typeof type;
  const kind = (type as { [Kind]?: unknown })[Kind];
  const shape = typeof kind === 'string' ? kind : 'schema';
  const fields = isPlainObject(type.properties) ? ` {${Object.keys(type.properties).join(', ')}}` : '';
  const name = typeof type.title === 'string' ? type.title : typeof type.$id === 'string' ? type.$id : '';
  return name === '' ? `${shape}${fields}` : `${name} (${shape}${fields})`;
}
