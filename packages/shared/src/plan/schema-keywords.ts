/** How the renderer treats each JSON Schema keyword it keeps; any other key is dropped. */
export type KeywordKind = 'value' | 'schema' | 'schemas' | 'schema-map' | 'items';

/**
 * The JSON Schema (2020-12 and draft-07) keywords a derived schema keeps. TypeBox-private keys
 * (`$id`, `parameters`, `returns`, `source`, byte-length limits …) are not here, so they are dropped;
 * `$ref` and `$defs` are resolved by the renderer instead of being kept.
 */
export const SCHEMA_KEYWORDS: ReadonlyMap<string, KeywordKind> = new Map<string, KeywordKind>([
  // plain data: copied as JSON
  ['type', 'value'],
  ['format', 'value'],
  ['title', 'value'],
  ['description', 'value'],
  ['enum', 'value'],
  ['const', 'value'],
  ['default', 'value'],
  ['examples', 'value'],
  ['required', 'value'],
  ['$comment', 'value'],
  ['deprecated', 'value'],
  ['readOnly', 'value'],
  ['writeOnly', 'value'],
  ['multipleOf', 'value'],
  ['maximum', 'value'],
  ['exclusiveMaximum', 'value'],
  ['minimum', 'value'],
  ['exclusiveMinimum', 'value'],
  ['maxLength', 'value'],
  ['minLength', 'value'],
  ['pattern', 'value'],
  ['maxItems', 'value'],
  ['minItems', 'value'],
  ['uniqueItems', 'value'],
  ['maxContains', 'value'],
  ['minContains', 'value'],
  ['maxProperties', 'value'],
  ['minProperties', 'value'],
  ['dependentRequired', 'value'],
  ['contentEncoding', 'value'],
  ['contentMediaType', 'value'],
  // one sub-schema (or a boolean)
  ['additionalProperties', 'schema'],
  ['additionalItems', 'schema'],
  ['unevaluatedProperties', 'schema'],
  ['unevaluatedItems', 'schema'],
  ['propertyNames', 'schema'],
  ['contains', 'schema'],
  ['contentSchema', 'schema'],
  ['not', 'schema'],
  ['if', 'schema'],
  ['then', 'schema'],
  ['else', 'schema'],
  // a list of sub-schemas
  ['allOf', 'schemas'],
  ['anyOf', 'schemas'],
  ['oneOf', 'schemas'],
  ['prefixItems', 'schemas'],
  // a map of name to sub-schema, entries in declared order
  ['properties', 'schema-map'],
  ['patternProperties', 'schema-map'],
  ['dependentSchemas', 'schema-map'],
  // one sub-schema, or a list of them (TypeBox tuples)
  ['items', 'items'],
]);

/** The `type` values JSON Schema knows; TypeBox's `Date`, `Function`, `bigint` … are not among them. */
export const JSON_TYPES: ReadonlySet<string> = new Set([
  'string',
  'number',
  'integer',
  'boolean',
  'null',
  'array',
  'object',
]);
