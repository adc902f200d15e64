import { codedError, isTerminal, type JobData } from '@agentmesh/shared';
import type { Job } from 'bullmq';
import { SystemFaultError } from '../loop/job-errors.js';
import { settleRunnerSession } from '../loop/sessions/settle-runner-session.js';
import type { RunnerContext } from '../loop/steps/runner-context.js';
import { inInvocationTrace } from '../loop/tracing.js';

/**
 * Ends the invocation of a job that failed for good — its attempts spent on system faults, its
 * data unreadable, or stalled past the limit (docs/architecture/durability-and-fencing.md): a job that is given up must never leave
 * its invocation non-terminal. Unless it ended meanwhile, the invocation ends `failed` with
 * `internal` (one compare-and-set, unfenced: no activation holds it any more), its event stream
 * gets its terminal event, a parent gets the failed delegation as for any child failure, its own
 * subtree is cancelled as `DELETE` would, and its session moves on. Idempotent; a failure here is
 * logged (the watchdog looks again: endRecentFailedJobs).
 */
export async function endFailedJob(
  ctx: RunnerContext,
  job: Job,
  reason: string | undefined,
  attempts = job.attemptsMade,
): Promise<void> {
  const data = job.data as Partial<JobData> | undefined;
  const id = data?.invocationId;
  const rootId = data?.rootId;
  if (!id || !rootId) return;
  try {
    const state = await ctx.store.readState(rootId, id);
    if (!state || isTerminal(state.status)) return;
    // A system fault's own words went to the log (logSystemFault); its job says only that it was one.
    const why = !reason || reason === SYSTEM_FAULT ? 'system faults (logged by the runner)' : reason;
    const error = codedError(
      'internal',
      `The invocation's job failed for good after ${attempts} attempt(s): ${why.slice(0, 500)}`,
    );
    const flagged = await ctx.store.cancelSubtree(id);
    const ended = await ctx.store.finish(state, undefined, { status: 'failed', error });
    inInvocationTrace({ traceparent: data.traceparent, invocationId: id }, () =>
      ctx.log.error(
        { invocationId: id, rootId, agent: state.agent, jobId: job.id, ended, cancelled: flagged.length },
        'the job failed for good; its invocation ends failed',
      ),
    );
    await settleRunnerSession(ctx, state);
  } catch (e) {
    ctx.log.warn(
      { invocationId: id, jobId: job.id, err: (e as Error).message },
      'could not end the invocation of a job that failed for good; the watchdog retries',
    );
  }
}

const SYSTEM_FAULT = new SystemFaultError().message;

/**
 * True when a job whose attempt just failed on a system fault will not be retried: BullMQ's own
 * rule (Job.shouldRetryJob) for the attempts every invocation job has (JOB_RETRY).
 */
export function isLastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/** Failed jobs the watchdog looks at per queue and sweep (the newest), and how far back. */
const RECENT_FAILED = 20;
const RECENT_FAILED_MS = 10 * 60_000;

/**
 * The watchdog's part (runs under its lock): ends the invocations of jobs that failed for good in
 * the last minutes but are still not terminal — the runner that failed them died before it could.
 */
export async function endRecentFailedJobs(
  ctx: RunnerContext,
  queue: { getFailed(start: number, end: number): Promise<Job[]> },
): Promise<void> {
  const since = Date.now() - RECENT_FAILED_MS;
  for (const job of await queue.getFailed(0, RECENT_FAILED - 1)) {
    if (!job || (job.finishedOn ?? 0) < since) continue;
    await endFailedJob(ctx, job, job.failedReason);
  }
}
