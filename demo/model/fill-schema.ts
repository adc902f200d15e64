/** What the demo model knows when it must answer in JSON: its text answer, the cited titles, the result count. */
export interface Findings {
  text: string;
  titles: string[];
  count: number;
}

type Schema = Record<string, unknown>;

const SOURCES = /source|citation|reference|title|doc/i;
const VERDICT = /verdict|status|conclusion|assessment/i;

/**
 * A value matching an output schema, built from the findings: every required property (all of
 * them when none is required) filled by its type and name — the answer text in strings, the cited
 * titles in source-like fields, the result count in numbers, the first `enum`
 * value when the schema fixes the choices.
 */
export function fillSchema(schema: Schema, findings: Findings, name = 'answer'): unknown {
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  if ('const' in schema) return schema.const;
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type) {
    case 'object':
      return fillObject(schema, findings);
    case 'array': {
      const items = isObject(schema.items) ? schema.items : {};
      if (items.type === 'string' || items.type === undefined) {
        return SOURCES.test(name) ? findings.titles : [findings.text];
      }
      return [fillSchema(items, findings, name)];
    }
    case 'number':
    case 'integer':
      return findings.count;
    case 'boolean':
      return findings.count > 0;
    case 'null':
      return null;
    default:
      return fillString(name, findings);
  }
}

function fillObject(schema: Schema, findings: Findings): Record<string, unknown> {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.map(String) : [];
  const names = required.length > 0 ? required : Object.keys(properties);
  const value: Record<string, unknown> = {};
  for (const key of names) {
    const property = properties[key];
    value[key] = fillSchema(isObject(property) ? property : { type: 'string' }, findings, key);
  }
  return value;
}

function fillString(name: string, findings: Findings): string {
  if (SOURCES.test(name)) return findings.titles.length > 0 ? findings.titles.join('; ') : 'none';
  if (VERDICT.test(name)) {
    return findings.titles.length > 0
      ? `supported by ${findings.titles.length} document(s)`
      : 'not supported by the documents';
  }
  return findings.text;
}

const isObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);
