import { MeshError } from '../errors/mesh-error.js';

/** The root of every path a normalization refusal reports (`result.items[3].next`). */
export const RESULT_ROOT = 'result';

/** What a refusal names as the value it walked, unless told otherwise (docs/reference/callables-and-results.md's exact texts). */
const SUBAGENT_RESULT = 'sub-agent result';

/**
 * What a stack overflow while walking a result becomes (upstream contract 40,
 * docs/reference/upstream-contracts.md).
 */
export const TOO_DEEP_MESSAGE = 'Sub-agent result is cyclic or too deeply nested to normalize as JSON';

/** Why a value was refused; the message is built from it and the subject. */
type Refusal =
  | { kind: 'nonStringKey' | 'nonFinite' | 'cycle' | 'tooDeep' }
  | { kind: 'unsupported'; found: string };

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

function messageOf(refusal: Refusal, path: string, subject: string): string {
  switch (refusal.kind) {
    case 'nonStringKey':
      return `Map keys in ${subject} must be strings at ${path}`;
    case 'nonFinite':
      return `Non-finite number in ${subject} at ${path}`;
    case 'cycle':
      return `${capital(subject)} must be JSON-compatible at ${path}, cycle detected`;
    case 'tooDeep':
      return `${capital(subject)} is cyclic or too deeply nested to normalize as JSON`;
    case 'unsupported':
      return `${capital(subject)} must be JSON-compatible at ${path}, found ${refusal.found}`;
  }
}

/** A result JSON cannot express, refused with the path of the offending value and an exact message. */
export class ResultNormalizationError extends MeshError {
  /** Where the offending value sits, from `result`: `result.outer[0]`, `result.ratio`, `result`. */
  readonly path: string;

  private constructor(
    path: string,
    private readonly refusal: Refusal,
    subject = SUBAGENT_RESULT,
  ) {
    const message = messageOf(refusal, path, subject);
    // The message is the whole reason: it reaches the model as `Sub-agent … execute failed: <message>`.
    super('subagent_failed', message, [{ path, message }]);
    this.name = 'ResultNormalizationError';
    this.path = path;
  }

  /**
   * The same refusal naming another subject than a sub-agent's result: `tool search result` for
   * what a tool returned (issue 24: a tool's was reported as a sub-agent's).
   */
  about(subject: string): ResultNormalizationError {
    return new ResultNormalizationError(this.path, this.refusal, subject);
  }

  /** A Map whose keys are not all strings, reported at the Map's own path. */
  static nonStringKey(path: string): ResultNormalizationError {
    return new ResultNormalizationError(path, { kind: 'nonStringKey' });
  }

  /** NaN, Infinity or -Infinity. */
  static nonFinite(path: string): ResultNormalizationError {
    return new ResultNormalizationError(path, { kind: 'nonFinite' });
  }

  /** A container that is its own ancestor on the path being walked. */
  static cycle(path: string): ResultNormalizationError {
    return new ResultNormalizationError(path, { kind: 'cycle' });
  }

  /** Any other value JSON cannot express; `found` names its type (`bigint`, `Date`, `Review`). */
  static unsupported(path: string, found: string): ResultNormalizationError {
    return new ResultNormalizationError(path, { kind: 'unsupported', found });
  }

  /** A walk that overflowed the stack: the value is cyclic or nested too deeply. */
  static tooDeep(): ResultNormalizationError {
    return new ResultNormalizationError(RESULT_ROOT, { kind: 'tooDeep' });
  }
}

/** Runs a recursive walk and turns a stack overflow into a refusal instead of a crashed runner. */
export function absorbStackOverflow<T>(walk: () => T): T {
  try {
    return walk();
  } catch (e) {
    if (e instanceof RangeError && e.message.includes('Maximum call stack size exceeded')) {
      throw ResultNormalizationError.tooDeep();
    }
    throw e;
  }
}
