import { setMaxListeners } from 'node:events';
import { connectRedis, type KeyLayout, queueName, type RedisTarget } from '@agentmesh/shared';
import { Worker } from 'bullmq';
import { settleJobError } from '../job-errors.js';
import type { Slots } from '../slots.js';
import { runActivation } from '../steps/run-activation.js';
import type { RunnerContext } from '../steps/runner-context.js';
import { defineFetchScripts, takeFetchHints } from './fetch-scripts.js';

/** How a runner's workers take jobs: shared slots, lock settings and the activations in flight. */
export interface WorkerSettings {
  redis: RedisTarget;
  keys: KeyLayout;
  concurrency: number;
  lockDurationMs: number;
  maxRecoveries: number;
  slots: Slots;
  /** Each activation's abort controller, by invocation id (the cancel listener aborts them). */
  inFlight: Map<string, AbortController>;
}

/** The BullMQ worker of one hosted agent's queue: each job is one activation, within the runner's slots. */
export function startAgentWorker(name: string, ctx: RunnerContext, s: WorkerSettings): Worker {
  const { slots, inFlight } = s;
  // The worker's connection is ours (BullMQ duplicates it for its blocking reads, and leaves it
  // to us to close): it carries the fetch steps that wake no worker for nothing and tell when the
  // queue is empty, a hint the worker takes (fetch-scripts).
  const connection = connectRedis(s.redis, { maxRetriesPerRequest: null });
  defineFetchScripts(connection);
  const worker = new Worker(
    queueName(name),
    async (job, token, signal) => {
      await slots.acquire();
      ctx.metrics.slotsInUse.set(slots.inUse);
      const cancel = new AbortController();
      // Each call in flight listens on it (timeoutSignal), up to a turn's calls at once: not a leak.
      setMaxListeners(ctx.limits.maxCallsPerTurn + 16, cancel.signal);
      const invocationId = (job.data as { invocationId?: string })?.invocationId ?? '';
      inFlight.set(invocationId, cancel);
      // The job's own signal (its lock lost) aborts the activation too; linked by hand, not with
      // AbortSignal.any, whose links outlive the job.
      const onLockLost = () => cancel.abort(signal?.reason);
      if (signal?.aborted) onLockLost();
      else signal?.addEventListener('abort', onLockLost, { once: true });
      try {
        await runActivation(ctx, job, token ?? '', cancel.signal);
      } catch (e) {
        await settleJobError(e, job, token ?? '');
      } finally {
        signal?.removeEventListener('abort', onLockLost);
        inFlight.delete(invocationId);
        slots.release();
        ctx.metrics.slotsInUse.set(slots.inUse);
      }
    },
    {
      connection,
      prefix: s.keys.bullPrefix,
      concurrency: s.concurrency,
      lockDuration: s.lockDurationMs,
      stalledInterval: Math.max(250, Math.floor(s.lockDurationMs / 2)),
      // A long-lived parent may outlive several runner crashes (bullmq: `stc` is never reset).
      maxStalledCount: s.maxRecoveries + 1,
    },
  );
  takeFetchHints(worker);
  worker.on('closed', () => connection.disconnect());
  return worker;
}
