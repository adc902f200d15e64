import { type KeyLayout, rootOf } from '@agentmesh/shared';
import type { Queue } from 'bullmq';

/** The part of a Redis client waking a parked job needs. */
interface FieldReader {
  hmget(key: string, ...fields: string[]): Promise<(string | null)[]>;
}

/**
 * Wakes an invocation parked on its approvals (docs/guides/approvals-and-budgets.md): its job waits delayed until the
 * deadline; promoting it lets any runner resume it now. A job that is not delayed (its runner is
 * still parking it, or it already woke) is left alone: the runner looks again once it parked.
 */
export async function wakeParkedJob(
  redis: FieldReader,
  keys: KeyLayout,
  queues: ReadonlyMap<string, Queue>,
  id: string,
): Promise<void> {
  const [agent, jobId, status] = await redis.hmget(
    keys.invocation(rootOf(id), id),
    'agent',
    'approvalJob',
    'status',
  );
  const queue = agent ? queues.get(agent) : undefined;
  if (!queue || !jobId || status !== 'waiting') return;
  const job = await queue.getJob(jobId);
  await job?.promote().catch(() => undefined);
}
