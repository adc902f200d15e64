import { compileSchema, describeValidation } from '../json/index.js';
import type { JsonSchema } from '../plan/types.js';

/** How many schema problems a refusal lists. */
const MAX_PROBLEMS_SHOWN = 20;

/** Values whose JSON text is at most this long have all their problems counted. */
const FULL_REPORT_CHARS = 64 * 1024;

/**
 * Checks a model-made value against a schema with work bounded by the value's size: undefined
 * when valid, else one line naming its first problems. A huge value wrong in millions of places
 * (each an Ajv error object, seconds of CPU) is judged by a check that stops at the first one.
 */
export function boundedValidation(
  schema: JsonSchema,
  value: unknown,
  textLength: number,
): string | undefined {
  const quick = compileSchema(schema, { firstErrorOnly: true })(value);
  if (quick.ok) return undefined;
  const full = textLength <= FULL_REPORT_CHARS ? compileSchema(schema)(value) : quick;
  const details = full.ok ? quick.details : full.details;
  const shown = details.slice(0, MAX_PROBLEMS_SHOWN);
  const more = details.length - shown.length;
  return `${describeValidation(shown)}${more > 0 ? ` (and ${more} more)` : ''}`;
}
