import type { TSchema } from '@sinclair/typebox';
import { Value, type ValueError, ValueErrorType, ValuePointer } from '@sinclair/typebox/value';
import { NAME_PATTERN } from '../defaults.js';
import { formatPath, pointerSegments } from './config-path.js';
import { MeshConfigSchema } from './mesh-config-schema.js';
import type { ConfigProblem } from './types.js';

/** Every place where `value` breaks `MeshConfigSchema`, one problem per path, in words a config author reads. */
export function schemaProblems(value: unknown, file: string): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const seen = new Set<string>();
  for (const error of errorsOf(value)) {
    const path = formatPath(pointerSegments(error.path, value));
    // A missing property also fails its own type check: the first error of a path says it best.
    if (seen.has(path)) continue;
    seen.add(path);
    problems.push({ file, path, message: describe(error) });
  }
  return problems;
}

/** Turns back into strings the env-coerced scalars (`${KEY}` = `123`) that sit where the schema wants text. */
export function restoreCoercedStrings(value: unknown, coerced: ReadonlyMap<string, string>): void {
  if (coerced.size === 0) return;
  for (const error of errorsOf(value)) {
    const text = coerced.get(error.path);
    if (text !== undefined && (error.type === ValueErrorType.String || error.type === ValueErrorType.Union)) {
      ValuePointer.Set(value, error.path, text);
    }
  }
}

function errorsOf(value: unknown): ValueError[] {
  return [...flatten(Value.Errors(MeshConfigSchema, value))];
}

// A union fails as a whole; when one branch matched the value's kind, that branch's deeper errors say more.
function* flatten(errors: Iterable<ValueError>): Generator<ValueError> {
  for (const error of errors) {
    if (error.type !== ValueErrorType.Union) {
      yield error;
      continue;
    }
    const branch = error.errors
      .map((branchErrors) => [...branchErrors])
      .find((list) => list.length > 0 && list.every((e) => e.path.length > error.path.length));
    if (branch) yield* flatten(branch);
    else yield error;
  }
}

function describe(error: ValueError): string {
  const schema: TSchema = error.schema;
  switch (error.type) {
    case ValueErrorType.ObjectAdditionalProperties:
      if ('patternProperties' in schema) return `invalid name: must match ${NAME_PATTERN}`;
      return unknownKey(error.path, Object.keys(schema.properties ?? {}));
    case ValueErrorType.ObjectRequiredProperty:
      return 'required';
    case ValueErrorType.StringPattern:
      return `invalid name ${JSON.stringify(error.value)}: must match ${NAME_PATTERN}`;
    case ValueErrorType.Union:
      return `expected ${schema.description ?? 'one of the allowed shapes'}`;
    default:
      return error.message.charAt(0).toLowerCase() + error.message.slice(1);
  }
}

function unknownKey(pointer: string, allowed: string[]): string {
  const key = pointer
    .slice(pointer.lastIndexOf('/') + 1)
    .replace(/~1/g, '/')
    .replace(/~0/g, '~');
  const near = allowed.find((candidate) => distance(key.toLowerCase(), candidate.toLowerCase()) <= 2);
  return near ? `unknown key (did you mean "${near}"?)` : `unknown key (allowed: ${allowed.join(', ')})`;
}

// Levenshtein distance, enough to catch typos such as `mdoel` or `subagent`.
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row.push(Math.min(row[j - 1]! + 1, previous[j]! + 1, previous[j - 1]! + cost));
    }
    previous = row;
  }
  return previous[b.length]!;
}
