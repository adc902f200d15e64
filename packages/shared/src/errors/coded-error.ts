import type { CodedError } from '../wire/invocation-view.js';
import { type ErrorCode, messageOf } from './error-codes.js';

/**
 * A `{code, message}` error of the registry: the message is given, or the registry's template
 * filled with `params` (`codedError('too_many_calls', {limit: 64})`).
 */
export function codedError(
  code: ErrorCode,
  message: string | Record<string, string | number> = {},
): CodedError {
  return { code, message: typeof message === 'string' ? message : messageOf(code, message) };
}
