import { findComputation } from './find-computation.js';

type Schema = Record<string, unknown>;

const MAX_DEPTH = 8;
const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Arguments for a callable, built from its parameters' JSON Schema and the user's text (
 * docs/guides/getting-started.md: the demo model exercises whatever an agent offers): every required property (all of them
 * when none is required) filled by its type, its name and its constraints — a `default`,
 * `const`, the first `enum` value or example when the schema gives one; else the text itself in a
 * string, an arithmetic expression found in the text for an `expression`, a short title for a
 * `title` or `name`; a number of the text (or the minimum) within the bounds; `true`; one item.
 */
export function fillArguments(parameters: Schema, text: string): Record<string, unknown> {
  const value = fill(parameters, text, 'input', 0);
  return isObject(value) ? value : {};
}

function fill(schema: Schema, text: string, name: string, depth: number): unknown {
  if ('const' in schema) return schema.const;
  if ('default' in schema) return schema.default;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0];
  const alternative = [schema.anyOf, schema.oneOf, schema.allOf].find(Array.isArray)?.find(isObject);
  if (alternative && !schema.type) return fill(alternative, text, name, depth);
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (depth >= MAX_DEPTH) return type === 'object' ? {} : type === 'array' ? [] : text;
  switch (type) {
    case 'object':
      return fillObject(schema, text, depth);
    case 'array': {
      const items = isObject(schema.items) ? schema.items : { type: 'string' };
      const count = Math.max(1, Number(schema.minItems ?? 1));
      return Array.from({ length: Math.min(count, 16) }, () => fill(items, text, name, depth + 1));
    }
    case 'integer':
    case 'number':
      return fillNumber(schema, text, type === 'integer');
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return fillString(schema, text, name);
  }
}

function fillObject(schema: Schema, text: string, depth: number): Record<string, unknown> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  const names = required.length > 0 ? required : Object.keys(properties);
  const value: Record<string, unknown> = {};
  for (const key of names) {
    const property = properties[key];
    value[key] = fill(isObject(property) ? property : { type: 'string' }, text, key, depth + 1);
  }
  return value;
}

function fillNumber(schema: Schema, text: string, integer: boolean): number {
  const min = bound(schema.minimum, schema.exclusiveMinimum, 1, integer);
  const max = bound(schema.maximum, schema.exclusiveMaximum, -1, integer);
  const mentioned = Number(/-?\d+(?:\.\d+)?/.exec(text)?.[0] ?? Number.NaN);
  let n = Number.isFinite(mentioned) ? mentioned : (min ?? 1);
  if (integer) n = Math.round(n);
  if (min !== undefined && n < min) n = min;
  if (max !== undefined && n > max) n = max;
  return n;
}

// `minimum`, or just past `exclusiveMinimum` (side 1); the same for the maximum (side -1).
function bound(inclusive: unknown, exclusive: unknown, side: 1 | -1, integer: boolean): number | undefined {
  if (typeof inclusive === 'number') return inclusive;
  if (typeof exclusive === 'number') return exclusive + side * (integer ? 1 : 0.001);
  return undefined;
}

function fillString(schema: Schema, text: string, name: string): string {
  const format = typeof schema.format === 'string' ? schema.format : '';
  let value: string;
  if (format === 'date-time') value = new Date().toISOString();
  else if (format === 'date') value = new Date().toISOString().slice(0, 10);
  else if (format === 'email' || /e-?mail/i.test(name)) value = 'someone@example.com';
  else if (format === 'uri' || format === 'url' || /(?:url|uri|link)$/i.test(name))
    value = 'https://example.com/';
  else if (/expression|formula/i.test(name)) value = findComputation(text) ?? '1 + 1';
  else if (/title|name|subject|label/i.test(name)) value = titleOf(text);
  else value = text.trim() || 'demo';
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  if (maxLength !== undefined && value.length > maxLength) value = value.slice(0, maxLength);
  if (value.length < minLength) value = value.padEnd(minLength, '.');
  return value;
}

// The text's first sentence, cut at 80 characters.
function titleOf(text: string): string {
  const first = text.split(/[.!?\n]/)[0]!.trim();
  return (first.length > 80 ? first.slice(0, 80).trim() : first) || 'Demo';
}
