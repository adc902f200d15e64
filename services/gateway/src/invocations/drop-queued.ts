import { codedError, type KeyLayout } from '@agentmesh/shared';
import { finishArgs, type MeshScripts } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import { readInvocationSafely } from './read-invocation-safely.js';

/**
 * Cancels an invocation no runner holds: its job, still queued, is removed and the invocation
 * finished `cancelled` at once. One a runner holds is left to it: it sees the cancel flag.
 */
export async function dropQueued(
  scripts: MeshScripts,
  keys: KeyLayout,
  queues: Map<string, Queue>,
  retentionSeconds: number,
  id: string,
): Promise<void> {
  const found = await readInvocationSafely(scripts, keys, id);
  const queue = found && queues.get(found.state.agent);
  if (!found || !queue) return;
  const removed = await queue.remove(id).catch(() => 0);
  // A runner holds it: it sees the flag and finishes it. One of a session still waiting its
  // turn has no job at all: nobody else would finish it.
  const waiting = removed !== 1 && found.state.session && !(await queue.getJob(id));
  if (removed !== 1 && !waiting) return;
  const error = codedError('cancelled');
  await scripts.finish(
    ...finishArgs(keys, found.state, undefined, { status: 'cancelled', error }, retentionSeconds),
  );
}
