import { type CodedError, type ErrorCode, isMeshError, messageOf } from '@agentmesh/shared';

/**
 * The coded error users and models may see for a failure: a MeshError as it was written (its
 * message is ours), anything else (a Redis reply, ECONNREFUSED with an address, a bug's
 * TypeError) as `fallback` with the registry's generic message; the detail belongs in the log.
 */
export function publicError(e: unknown, fallback: ErrorCode): CodedError {
  if (isMeshError(e)) return { code: e.code, message: e.message };
  return { code: fallback, message: messageOf(fallback) };
}
