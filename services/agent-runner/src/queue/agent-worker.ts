import { setMaxListeners } from 'node:events';
import { type KeyLayout, queueName } from '@agentmesh/shared';
import { connectRedis, type RedisTarget } from '@agentmesh/shared/redis';
import { type Job, type Processor, Worker, type WorkerOptions } from 'bullmq';
import { isSystemFault, settleJobError } from '../loop/job-errors.js';
import { runActivation } from '../loop/steps/run-activation.js';
import type { RunnerContext } from '../loop/steps/runner-context.js';
import { endFailedJob, isLastAttempt } from './end-failed-job.js';
import type { WorkerFastPath } from './fast-path/index.js';
import type { Slots } from './slots.js';
import { TakenLocks } from './taken-lock.js';

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
  /** The queue fast path (queue/fast-path), loaded when MESH_QUEUE_FASTPATH is on on one server. */
  fastPath: WorkerFastPath | undefined;
  /** The name every connection of the runner bears (gone-runners.ts). */
  connectionName: string;
}

/** BullMQ's stalled-check settings of a runner's workers, which the gone-runner watch uses too. */
export function stalledCheckSettings(s: { lockDurationMs: number; maxRecoveries: number }) {
  return {
    stalledInterval: Math.max(250, Math.floor(s.lockDurationMs / 2)),
    // A long-lived parent may outlive several runner crashes (bullmq: `stc` is never reset).
    maxStalledCount: s.maxRecoveries + 1,
  };
}

/**
 * The BullMQ worker of one hosted agent's queue: each job is one activation, within the runner's
 * slots. Stock BullMQ (its Worker and processor call) unless the queue fast path builds it.
 */
export function startAgentWorker(name: string, ctx: RunnerContext, s: WorkerSettings): Worker {
  const { slots, inFlight } = s;
  // The worker's connection is ours (BullMQ duplicates it for its blocking reads, and leaves it
  // to us to close): it bears the runner's name.
  const connection = connectRedis(s.redis, { maxRetriesPerRequest: null, connectionName: s.connectionName });
  const options: WorkerOptions = {
    connection,
    prefix: s.keys.bullPrefix,
    concurrency: s.concurrency,
    lockDuration: s.lockDurationMs,
    ...stalledCheckSettings(s),
    // Kept in each job it takes (`pb`): the gone-runner watch finds a dead runner's jobs by it.
    name: ctx.runnerId,
  };
  let fast: ReturnType<WorkerFastPath> | undefined;
  const takenLocks = s.fastPath ? undefined : new TakenLocks(s.lockDurationMs);
  // One job's activation, within the runner's slots: BullMQ's processor call (with the fast path,
  // made as soon as its take answered when the take activated it). `signal` is aborted when its
  // lock is lost.
  const start = async (job: Job, token: string, signal: AbortSignal | undefined): Promise<void> => {
    takenLocks?.processing(job, token);
    const taken = fast?.taken(job.id);
    // In flight (a cancel aborts it) from before it waits for a slot: it may be activated already.
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
    const waited = await slots.acquire();
    ctx.metrics.slotsInUse.set(slots.inUse);
    try {
      await runActivation(
        ctx,
        job,
        token,
        cancel.signal,
        taken === undefined ? undefined : { reply: taken, late: waited },
      );
    } catch (e) {
      // The last attempt of a system fault: its invocation ends before BullMQ fails the job, so
      // a parent moved on by that failure finds its delegation's outcome written. Not when the
      // activation was aborted: its lock may be lost, and another runner hold the invocation.
      if (!cancel.signal.aborted && isSystemFault(e) && isLastAttempt(job))
        await endFailedJob(ctx, job, undefined, job.attemptsMade + 1);
      await settleJobError(e, job, token);
    } finally {
      signal?.removeEventListener('abort', onLockLost);
      inFlight.delete(invocationId);
      slots.release();
      ctx.metrics.slotsInUse.set(slots.inUse);
    }
  };
  const processor: Processor = (job, token, signal) => start(job, token ?? '', signal);
  let worker: Worker;
  if (s.fastPath) {
    fast = s.fastPath(name, ctx, {
      connection,
      options,
      processor,
      slots,
      keys: s.keys,
    });
    worker = fast.worker;
  } else {
    worker = new Worker(queueName(name), processor, options);
    takenLocks?.attach(worker);
  }
  // BullMQ says `failed` of every failed attempt; a job given up (its attempts spent, its data
  // unreadable, stalled past the limit) must not leave its invocation running (docs/architecture/durability-and-fencing.md).
  worker.on('failed', (job) => {
    if (!job) return;
    void job
      .getState()
      .then((state) => (state === 'failed' ? endFailedJob(ctx, job, job.failedReason) : undefined))
      .catch(() => undefined); // the watchdog looks again (endRecentFailedJobs)
  });
  worker.on('closed', () => connection.disconnect());
  return worker;
}
