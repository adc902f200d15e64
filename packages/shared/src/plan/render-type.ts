import { Kind } from '@sinclair/typebox';
import { copyJson, escapePointer, isPlainObject, NotJsonError } from './copy-json.js';
import { orderSchemaKeys } from './schema-key-order.js';
import { JSON_TYPES, type KeywordKind, SCHEMA_KEYWORDS } from './schema-keywords.js';
import type { JsonSchema } from './types.js';

/** Why a type does not render; `selfReferential` picks the message family. */
export class RenderFailure extends Error {
  constructor(
    readonly selfReferential: boolean,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'RenderFailure';
  }
}

/** TypeBox kinds that are JavaScript-only: JSON Schema has no form for them. */
const NO_JSON_FORM = new Set([
  'AsyncIterator',
  'BigInt',
  'Constructor',
  'Date',
  'Function',
  'Iterator',
  'Promise',
  'RegExp',
  'Symbol',
  'Undefined',
  'Void',
]);

/** TypeBox kinds whose schema is JSON Schema already (bar private keys); any other kind is refused. */
const RENDERABLE = new Set([
  'Any',
  'Array',
  'Boolean',
  'Import',
  'Integer',
  'Intersect',
  'Literal',
  'Never',
  'Not',
  'Null',
  'Number',
  'Object',
  'Record',
  'Ref',
  'String',
  'TemplateLiteral',
  'This',
  'Tuple',
  'Uint8Array',
  'Union',
  'Unknown',
  'Unsafe',
]);

/** What the walk carries: the nodes and references on the current path, and a module's `$defs`. */
interface Walk {
  ancestors: Set<object>;
  refs: string[];
  ids: string[];
  defs: Record<string, unknown> | undefined;
}

/** Renders a TypeBox type (or a plain schema graph) as canonical JSON Schema data; throws RenderFailure. */
export function renderType(type: unknown): JsonSchema {
  const out = renderNode(type, '#', { ancestors: new Set(), refs: [], ids: [], defs: undefined });
  if (typeof out === 'boolean') throw new RenderFailure(false, '# is a boolean, not a type');
  return out;
}

function renderNode(node: unknown, at: string, walk: Walk): JsonSchema | boolean {
  if (typeof node === 'boolean') return node;
  if (!isPlainObject(node)) throw new RenderFailure(false, `${at} is ${describeValue(node)}, not a schema`);
  if (walk.ancestors.has(node)) throw new RenderFailure(true, `${at} contains itself`);
  const kind = (node as { [Kind]?: unknown })[Kind];
  checkKind(kind, node, at);
  const id = typeof node.$id === 'string' ? node.$id : undefined;
  walk.ancestors.add(node);
  if (id !== undefined) walk.ids.push(id);
  try {
    const inner = isPlainObject(node.$defs) ? { ...walk, defs: node.$defs } : walk;
    if (typeof node.$ref === 'string') return renderRef(node.$ref, at, inner);
    if (kind === 'Uint8Array' || node.type === 'Uint8Array') return binary(node);
    return renderKeywords(node, at, inner);
  } finally {
    walk.ancestors.delete(node);
    if (id !== undefined) walk.ids.pop();
  }
}

function checkKind(kind: unknown, node: Record<string, unknown>, at: string): void {
  if (typeof kind === 'string' && NO_JSON_FORM.has(kind)) {
    throw new RenderFailure(false, `${kind} at ${at} has no JSON Schema form`);
  }
  if (typeof kind === 'string' && !RENDERABLE.has(kind)) {
    throw new RenderFailure(false, `kind ${kind} at ${at} has no JSON Schema form`);
  }
  if (node.type === undefined || node.type === 'Uint8Array') return;
  for (const t of Array.isArray(node.type) ? node.type : [node.type]) {
    if (typeof t !== 'string' || !JSON_TYPES.has(t)) {
      throw new RenderFailure(
        false,
        `type ${JSON.stringify(t) ?? String(t)} at ${at} has no JSON Schema form`,
      );
    }
  }
}

/** Inlines a module's `$defs` entry; any other reference cannot be inlined, so the type is refused. */
function renderRef(ref: string, at: string, walk: Walk): JsonSchema | boolean {
  if (walk.refs.includes(ref) || walk.ids.includes(ref)) {
    throw new RenderFailure(true, `${at} refers back to ${JSON.stringify(ref)}`);
  }
  if (walk.defs === undefined || !(ref in walk.defs)) {
    throw new RenderFailure(true, `${at} refers to ${JSON.stringify(ref)} by reference`);
  }
  walk.refs.push(ref);
  try {
    return renderNode(walk.defs[ref], at, walk);
  } finally {
    walk.refs.pop();
  }
}

/**
 * Bytes render as pydantic renders `bytes` (upstream contract 6, docs/reference/upstream-contracts.md),
 * keeping the annotations.
 */
function binary(node: Record<string, unknown>): JsonSchema {
  const out: JsonSchema = { type: 'string', format: 'binary' };
  for (const key of ['title', 'description', '$comment', 'deprecated', 'readOnly', 'writeOnly']) {
    if (node[key] !== undefined) out[key] = copyJson(node[key]);
  }
  return ordered(out);
}

function renderKeywords(node: Record<string, unknown>, at: string, walk: Walk): JsonSchema {
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(node)) {
    const how = SCHEMA_KEYWORDS.get(key);
    if (how === undefined || value === undefined) continue;
    out[key] = renderKeyword(how, value, `${at}/${escapePointer(key)}`, walk);
  }
  if (isPlainObject(out.properties) && Array.isArray(out.required)) {
    // required = TypeBox's list minus defaulted properties: pydantic's rule (upstream contract 6)
    const props = out.properties;
    const required = out.required.filter((name) => !(isPlainObject(props[name]) && 'default' in props[name]));
    if (required.length > 0) out.required = required;
    else delete out.required;
  }
  return ordered(out);
}

function renderKeyword(how: KeywordKind, value: unknown, at: string, walk: Walk): unknown {
  if (how === 'value') {
    try {
      return copyJson(value, at);
    } catch (e) {
      if (e instanceof NotJsonError) throw new RenderFailure(false, `${e.at} is not JSON: ${e.reason}`);
      throw e;
    }
  }
  if (how === 'schema' || (how === 'items' && !Array.isArray(value))) return renderNode(value, at, walk);
  if (how === 'schemas' || how === 'items') {
    if (!Array.isArray(value)) throw new RenderFailure(false, `${at} is not a list of schemas`);
    return value.map((v, i) => renderNode(v, `${at}/${i}`, walk));
  }
  if (!isPlainObject(value)) throw new RenderFailure(false, `${at} is not a map of schemas`);
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value))
    out[name] = renderNode(v, `${at}/${escapePointer(name)}`, walk);
  return out;
}

function ordered(schema: JsonSchema): JsonSchema {
  const out: JsonSchema = {};
  for (const key of orderSchemaKeys(Object.keys(schema))) out[key] = schema[key];
  return out;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return `a ${value.constructor?.name ?? 'non-plain'} object`;
  return `a ${typeof value}`;
}
