import { setMaxListeners } from 'node:events';
import { connectRedis, isRedisCluster, type KeyLayout, queueName, type RedisTarget } from '@agentmesh/shared';
import { type Job, Worker } from 'bullmq';
import { isSystemFault, settleJobError } from '../job-errors.js';
import { agentLabel } from '../metrics.js';
import type { Slots } from '../slots.js';
import { reactStart, runActivation } from '../steps/run-activation.js';
import type { RunnerContext } from '../steps/runner-context.js';
import { DispatchedTakes } from './dispatched-takes.js';
import { EarlyStarts } from './early-start.js';
import { endFailedJob, isLastAttempt } from './end-failed-job.js';
import { COMPLETE_COMMAND, defineFetchScripts, FETCH_COMMANDS, takeFetchHints } from './fetch-scripts.js';
import { FinishesInCompletion } from './finish-in-completion.js';
import { HandOff } from './hand-off.js';
import { TakenActivations } from './take-activation.js';

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
  /** Takes activate the job's invocation (take-activation.ts); never on a cluster. */
  activateInTake: boolean;
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

/** The BullMQ worker of one hosted agent's queue: each job is one activation, within the runner's slots. */
export function startAgentWorker(name: string, ctx: RunnerContext, s: WorkerSettings): Worker {
  const { slots, inFlight } = s;
  // The worker's connection is ours (BullMQ duplicates it for its blocking reads, and leaves it
  // to us to close): it carries the fetch steps that wake no worker for nothing and tell when the
  // queue is empty, a hint the worker takes (fetch-scripts), and on one server activate the
  // invocation of the job they take (take-activation).
  const connection = connectRedis(s.redis, { maxRetriesPerRequest: null, connectionName: s.connectionName });
  defineFetchScripts(connection);
  const takes = new TakenActivations();
  let finishes: FinishesInCompletion | undefined;
  if (s.activateInTake && !isRedisCluster(connection)) {
    takes.attach(connection, FETCH_COMMANDS, {
      agent: name,
      runner: ctx.runnerId,
      keys: s.keys,
      react: reactStart(ctx, name),
      ready: () => slots.free > 0,
    });
    // Outside the take's change: the take's settings stay the step's last argument.
    finishes = new FinishesInCompletion();
    finishes.attach(connection, COMPLETE_COMMAND.name, COMPLETE_COMMAND.keys);
  }
  // One job's activation, within the runner's slots: BullMQ's processor call, made as soon as its
  // take answered when the take activated it (EarlyStarts). `signal` is aborted when its lock is lost.
  const start = async (job: Job, token: string, signal: AbortSignal | undefined): Promise<void> => {
    const taken = takes.take(job.id);
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
        finishes,
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
  const worker = new Worker(queueName(name), (job, token, signal) => start(job, token ?? '', signal), {
    connection,
    prefix: s.keys.bullPrefix,
    concurrency: s.concurrency,
    lockDuration: s.lockDurationMs,
    ...stalledCheckSettings(s),
    // Kept in each job it takes (`pb`): the gone-runner watch finds a dead runner's jobs by it.
    name: ctx.runnerId,
    // With dispatches, it runs once its blocks can take them (below).
    autorun: !finishes,
  });
  takeFetchHints(worker);
  new EarlyStarts().attach(worker, (jobId) => takes.has(jobId));
  // BullMQ says `failed` of every failed attempt; a job given up (its attempts spent, its data
  // unreadable, stalled past the limit) must not leave its invocation running (DESIGN §7).
  worker.on('failed', (job) => {
    if (!job) return;
    void job
      .getState()
      .then((state) => (state === 'failed' ? endFailedJob(ctx, job, job.failedReason) : undefined))
      .catch(() => undefined); // the watchdog looks again (endRecentFailedJobs)
  });
  if (finishes) {
    ctx.handOffs?.set(name, new HandOff(worker, takes, () => slots.free > 0));
    // Jobs the gateway's add hands to it while it blocks (dispatched-takes.ts).
    const dispatched = new DispatchedTakes(worker, takes, {
      runner: ctx.runnerId,
      queueKey: worker.toKey(''),
      lockDurationMs: s.lockDurationMs,
      ready: () => slots.free > 0,
      onDelivered: () => ctx.metrics.dispatchedJobs.inc({ agent: agentLabel(ctx.plan, name) }),
    });
    const run = () => worker.run().catch((e: Error) => worker.emit('error', e));
    dispatched.attach().then(run, (e: Error) => {
      worker.emit('error', e);
      void run();
    });
  }
  worker.on('closed', () => connection.disconnect());
  return worker;
}
