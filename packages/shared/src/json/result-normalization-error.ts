import { MeshError } from '../errors/mesh-error.js';

/** The root of every path a normalization refusal reports (`result.items[3].next`). */
export const RESULT_ROOT = 'result';

/** What a stack overflow while walking a result becomes (upstream contract 40). */
export const TOO_DEEP_MESSAGE = 'Sub-agent result is cyclic or too deeply nested to normalize as JSON';

/** A result JSON cannot express, refused with the path of the offending value and an exact message. */
export class ResultNormalizationError extends MeshError {
  /** Where the offending value sits, from `result`: `result.outer[0]`, `result.ratio`, `result`. */
  readonly path: string;

  constructor(path: string, message: string) {
    // The message is the whole reason: it reaches the model as `Sub-agent … execute failed: <message>`.
    super('subagent_failed', message, [{ path, message }]);
    this.name = 'ResultNormalizationError';
    this.path = path;
  }

  /** A Map whose keys are not all strings, reported at the Map's own path. */
  static nonStringKey(path: string): ResultNormalizationError {
    return new ResultNormalizationError(path, `Map keys in sub-agent result must be strings at ${path}`);
  }

  /** NaN, Infinity or -Infinity. */
  static nonFinite(path: string): ResultNormalizationError {
    return new ResultNormalizationError(path, `Non-finite number in sub-agent result at ${path}`);
  }

  /** A container that is its own ancestor on the path being walked. */
  static cycle(path: string): ResultNormalizationError {
    return new ResultNormalizationError(
      path,
      `Sub-agent result must be JSON-compatible at ${path}, cycle detected`,
    );
  }

  /** Any other value JSON cannot express; `found` names its type (`bigint`, `Date`, `Review`). */
  static unsupported(path: string, found: string): ResultNormalizationError {
    return new ResultNormalizationError(
      path,
      `Sub-agent result must be JSON-compatible at ${path}, found ${found}`,
    );
  }
}

/** Runs a recursive walk and turns a stack overflow into a refusal instead of a crashed runner. */
export function absorbStackOverflow<T>(walk: () => T): T {
  try {
    return walk();
  } catch (e) {
    if (e instanceof RangeError && e.message.includes('Maximum call stack size exceeded')) {
      throw new ResultNormalizationError(RESULT_ROOT, TOO_DEEP_MESSAGE);
    }
    throw e;
  }
}
