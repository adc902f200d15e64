import type { CallRecord } from '@agentmesh/shared';

/**
 * The `attempt` of a call about to start, given its record so far: a record still `started` was
 * left in doubt by a crash (or a retried job), so this start re-runs it (docs/guides/console.md marks such
 * calls). Nothing for a first start (absent = 1), an approved call included.
 */
export function nextAttempt(prev: CallRecord | undefined): { attempt?: number } {
  if (prev?.status !== 'started') return {};
  return { attempt: (prev.attempt ?? 1) + 1 };
}
