import type { Logger } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import { inInvocationTrace } from '../../tracing.js';

// Delayed jobs looked at per queue and sweep: parked approvals beyond it wait for a later sweep.
const SWEEP_LIMIT = 1000;

/**
 * The watchdog's part for approvals (docs/guides/approvals-and-budgets.md): a job parked on approvals (delayed until its
 * deadline) whose invocation no longer waits — every approval decided, or cancelled — is
 * promoted. The gateway wakes it right after deciding or cancelling; this catches a gateway that
 * died in between, and a tree failed by its budget (the runner that failed it wakes no parked node).
 */
export async function wakeDecidedParks(
  redis: MeshRedis,
  queue: Queue,
  invocationKey: (id: string) => string,
  log: Logger,
): Promise<void> {
  for (const job of await queue.getDelayed(0, SWEEP_LIMIT - 1)) {
    const id = String(job?.data?.invocationId ?? '');
    if (!job?.id || !id) continue;
    const [status, approvalJob, cancelled, pending] = await redis.hmget(
      invocationKey(id),
      'status',
      'approvalJob',
      'cancelRequested',
      'approvalsPending',
    );
    if (status !== 'waiting' || approvalJob !== job.id) continue;
    if (cancelled !== '1' && Number(pending ?? 0) > 0) continue;
    inInvocationTrace({ traceparent: job.data.traceparent, invocationId: id }, () =>
      log.warn({ invocationId: id, jobId: job.id }, 'waking an invocation parked on a decided approval'),
    );
    await job.promote().catch(() => undefined);
  }
}
