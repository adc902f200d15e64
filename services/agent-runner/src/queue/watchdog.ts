import type { Logger } from '@agentmesh/shared';
import type { MeshRedis } from '@agentmesh/shared/redis';
import type { Queue } from 'bullmq';
import { wakeDecidedParks } from '../loop/steps/approvals/wake-decided-parks.js';
import { inInvocationTrace } from '../loop/tracing.js';

/** How often the watchdog looks, and how long a parent must have been parked to be suspect. */
export interface WatchdogOptions {
  intervalMs: number;
  minParkedMs: number;
  /** A Redis key that keeps two runners from resuming the same parent at once. */
  lockKey: string;
  /** The state key of an invocation (keys.ts), to read its deadline. */
  invocationKey: (id: string) => string;
  /** Ends the invocations of a queue's jobs that failed for good lately but are still running. */
  endFailed?: (queue: Queue) => Promise<void>;
}

/**
 * Finds parents parked in waiting-children past their deadline, or with no pending child left, which BullMQ should have
 * moved back to the queue but, in rare cases, does not (bullmq #3235, #2644). Such a parent is
 * resumed by a fresh job for the same invocation; the stuck one is removed (its children are done
 * and their results are in the parent's call records, not in BullMQ). Fencing makes a race with a
 * late BullMQ wake-up harmless: one activation wins, the other is fenced out. It also ends the
 * invocations of jobs that failed for good whose runner died before it could (`endFailed`).
 */
export function startWatchdog(
  redis: MeshRedis,
  queues: Queue[],
  opts: WatchdogOptions,
  log: Logger,
): () => void {
  let running = false;
  const sweep = async () => {
    if (running) return;
    running = true;
    try {
      const lock = await redis.set(opts.lockKey, '1', 'PX', opts.intervalMs, 'NX');
      if (lock !== 'OK') return;
      for (const queue of queues) {
        await opts.endFailed?.(queue);
        await wakeDecidedParks(redis, queue, opts.invocationKey, log);
        for (const job of await queue.getWaitingChildren(0, 499)) {
          if (!job?.id || Date.now() - (job.processedOn ?? job.timestamp) < opts.minParkedMs) continue;
          const id = String(job.data?.invocationId ?? '');
          const deadline = Number(await redis.hget(opts.invocationKey(id), 'deadline'));
          const overdue = deadline > 0 && deadline < Date.now();
          const { unprocessed } = await job.getDependenciesCount({ unprocessed: true });
          if ((unprocessed ?? 0) > 0 && !overdue) continue;
          // An overdue parent resumes too: its deadline fires even while it waits on children.
          inInvocationTrace({ traceparent: job.data?.traceparent, invocationId: id }, () =>
            log.warn({ invocationId: id, jobId: job.id, overdue }, 'resuming a parked parent'),
          );
          // The new job keeps the stuck one's place under its own parent, then the stuck one goes.
          const parent = job.parent ? { id: job.parent.id, queue: job.parent.queueKey } : undefined;
          await queue.add(job.name, job.data, {
            ...job.opts,
            jobId: `${id}-w${Date.now()}`,
            ...(parent ? { parent } : {}),
          } as never);
          await job.remove({ removeChildren: false }).catch(() => undefined);
        }
      }
    } catch (e) {
      log.warn({ err: (e as Error).message }, 'watchdog sweep failed');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void sweep(), opts.intervalMs);
  return () => clearInterval(timer);
}
