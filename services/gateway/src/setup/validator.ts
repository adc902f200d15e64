import { compileSchema, type ErrorDetail, type JsonSchema } from '@agentmesh/shared';
import type { FastifyInstance } from 'fastify';

type Properties = Record<string, JsonSchema>;

// What a query string may spell a number as: digits, and for `number` a decimal fraction.
const INTEGER_TEXT = /^[0-9]+$/;
const NUMBER_TEXT = /^[0-9]+(\.[0-9]+)?$/;

/**
 * One validator for the gateway, the runners and the model-facing tools: it never coerces a body,
 * never applies defaults, never strips (docs/reference/rest-api.md). Only a query string, which is text by nature,
 * has the digits of its `integer` and `number` parameters read as numbers, and `true` / `false` of
 * its `boolean` ones as booleans, so the OpenAPI document declares them typed. Declared headers are documentation: the routes check them (invocations/idempotency-key.ts).
 */
export function installValidator(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === 'headers') return (data: unknown) => ({ value: data });
    const check = compileSchema(schema as JsonSchema);
    const query = httpPart === 'querystring' ? numericProperties(schema as JsonSchema) : undefined;
    return (data: unknown) => {
      const value = query ? readNumbers(data, query) : data;
      const v = check(value);
      if (v.ok) return { value };
      const details = query ? v.details.map((d) => ruleOf(d, query)) : v.details;
      const error = Object.assign(new Error('validation failed'), {
        validation: details.map((d) => ({
          instancePath: d.path,
          message: d.message,
          params: {},
          keyword: '',
          schemaPath: '',
        })),
      });
      return { error };
    };
  });
}

/** The properties of a querystring schema declared `integer`, `number` or `boolean`. */
function numericProperties(schema: JsonSchema): Properties {
  const props = (schema.properties ?? {}) as Properties;
  return Object.fromEntries(
    Object.entries(props).filter(([, p]) => ['integer', 'number', 'boolean'].includes(p.type as string)),
  );
}

/** A copy of the query with the numeric parameters spelled as digits turned into numbers. */
function readNumbers(data: unknown, numeric: Properties): unknown {
  if (typeof data !== 'object' || data === null) return data;
  const out: Record<string, unknown> = { ...(data as Record<string, unknown>) };
  for (const [name, p] of Object.entries(numeric)) {
    const raw = out[name];
    if (typeof raw !== 'string') continue;
    if (p.type === 'boolean') {
      if (raw === 'true' || raw === 'false') out[name] = raw === 'true';
    } else if ((p.type === 'integer' ? INTEGER_TEXT : NUMBER_TEXT).test(raw)) out[name] = Number(raw);
  }
  return out;
}

/** A problem with a numeric parameter says the whole rule: `must be a whole number from 1 to 100`. */
function ruleOf(d: ErrorDetail, numeric: Properties): ErrorDetail {
  const p = numeric[d.path.slice(1)];
  if (!p) return d;
  if (p.type === 'boolean') return { path: d.path, message: 'must be true or false' };
  const kind = p.type === 'integer' ? 'a whole number' : 'a number';
  const range =
    typeof p.minimum === 'number' && typeof p.maximum === 'number'
      ? ` from ${p.minimum} to ${p.maximum}`
      : '';
  return { path: d.path, message: `must be ${kind}${range}` };
}
