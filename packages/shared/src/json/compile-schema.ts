import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ErrorDetail } from '../errors/mesh-error.js';
import type { JsonSchema } from '../plan/types.js';
import { linearRegExp } from './linear-reg-exp.js';

/** The verdict of a compiled schema: valid, or every problem with its JSON-pointer path. */
export type SchemaVerdict = { ok: true } | { ok: false; details: ErrorDetail[] };

/** A compiled JSON Schema: judges a value without changing it. */
export type SchemaCheck = (value: unknown) => SchemaVerdict;

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the
// module object for the type checker, while Node hands over the plugin itself.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const addFormats = ((addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  addFormatsModule) as unknown as FormatsPlugin;

// One instance per mode for the whole process. A validator judges, it never repairs: no type
// coercion (`{"n":"1"}` fails `integer`), no defaults filled in, no properties stripped; unknown
// keywords tolerated (schemas come from users and MCP servers); patterns match in linear time.
function newAjv(allErrors: boolean): Ajv {
  const ajv = new Ajv({
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    allErrors,
    strict: false,
    code: { regExp: linearRegExp },
  });
  addFormats(ajv);
  // OpenAPI's `format: binary` (upstream derives it for byte payloads): any string passes.
  ajv.addFormat('binary', true);
  return ajv;
}
const modes = {
  all: { ajv: newAjv(true), compiled: new WeakMap<JsonSchema, SchemaCheck>() },
  first: { ajv: newAjv(false), compiled: new WeakMap<JsonSchema, SchemaCheck>() },
};

/**
 * Compiles a JSON Schema once per schema object; throws Ajv's error for a schema that is not
 * valid. Every error is reported unless `firstErrorOnly`: that check stops at the first, so a huge
 * value wrong everywhere (a hostile model's) costs no more than one wrong once (docs/reference/bounds.md).
 */
export function compileSchema(schema: JsonSchema, opts: { firstErrorOnly?: boolean } = {}): SchemaCheck {
  const { ajv, compiled } = opts.firstErrorOnly ? modes.first : modes.all;
  const cached = compiled.get(schema);
  if (cached) return cached;
  const validate: ValidateFunction = ajv.compile(schema);
  // The compiled function is self-contained: forget the schema so Ajv neither keeps it alive nor
  // refuses another schema object with the same `$id` (a plan rebuilt after a restart).
  ajv.removeSchema(schema);
  const check: SchemaCheck = (value) =>
    validate(value) ? { ok: true } : { ok: false, details: (validate.errors ?? []).map(toDetail) };
  compiled.set(schema, check);
  return check;
}

/** One line naming every problem: `/prompt: must be string; /x: must have required property 'x'`. */
export function describeValidation(details: readonly ErrorDetail[]): string {
  return details.map((d) => `${d.path === '' ? '/' : d.path}: ${d.message}`).join('; ');
}

function toDetail(error: ErrorObject): ErrorDetail {
  const message = error.message ?? `must pass "${error.keyword}"`;
  // A missing property is located where it should have been, not at its parent object.
  if (error.keyword === 'required') {
    const missing = String((error.params as { missingProperty?: unknown }).missingProperty ?? '');
    return { path: `${error.instancePath}/${escapePointer(missing)}`, message };
  }
  // So is a property the schema forbids, which ajv reports at its parent without naming it.
  if (error.keyword === 'additionalProperties') {
    const extra = String((error.params as { additionalProperty?: unknown }).additionalProperty ?? '');
    return { path: `${error.instancePath}/${escapePointer(extra)}`, message: 'is not an allowed property' };
  }
  return { path: error.instancePath, message };
}

/** Escapes one JSON-pointer segment (RFC 6901). */
function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}
