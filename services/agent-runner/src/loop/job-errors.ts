import { isMeshError, type Logger } from '@agentmesh/shared';
import {
  DelayedError,
  type Job,
  RateLimitError,
  UnrecoverableError,
  WaitingChildrenError,
  WaitingError,
} from 'bullmq';

/** The runner is draining and requeues the job: it goes to the queue for any runner to take. */
export class RequeueError extends Error {
  constructor() {
    super('The runner is shutting down and requeues the invocation.');
    this.name = 'RequeueError';
  }
}

/** What a job that failed on a system fault reports to BullMQ (and so to a parent that asks). */
export class SystemFaultError extends Error {
  constructor() {
    super('The runner hit a system fault (logged by the runner); the job is retried.');
    this.name = 'SystemFaultError';
  }
}

/** BullMQ's control-flow errors: they steer the job and are not failures. */
const CONTROL = [DelayedError, RateLimitError, UnrecoverableError, WaitingChildrenError, WaitingError];

/** A system fault: neither a requeue, nor a mesh outcome, nor BullMQ's control flow. */
export function isSystemFault(e: unknown): boolean {
  return !(e instanceof RequeueError || isMeshError(e) || CONTROL.some((control) => e instanceof control));
}

/**
 * Logs a system fault's own words (a Redis reply, ECONNREFUSED with an address, a stack), which
 * never reach the job's failedReason (see settleJobError); other errors are not logged here. The
 * activation calls it inside its span, so the line carries the trace's ids (docs/reference/traces.md).
 */
export function logSystemFault(e: unknown, job: Job, log: Logger): void {
  if (!isSystemFault(e)) return;
  const err = e instanceof Error ? e : new Error(String(e));
  log.error(
    {
      jobId: job.id,
      invocationId: (job.data as { invocationId?: string } | undefined)?.invocationId,
      err: err.message,
      stack: err.stack,
    },
    'activation failed on a system fault; the job is retried',
  );
}

/**
 * The one place mesh outcomes meet BullMQ semantics. Business failures never reach here: the
 * activation writes them into the invocation and the job completes. A requeue moves the job to
 * the queue without spending an attempt (DelayedError, like WaitingChildrenError, does not count);
 * anything else is a system fault and BullMQ retries it with backoff, told only that it was one:
 * its own words went to the log (logSystemFault).
 */
export async function settleJobError(e: unknown, job: Job, token: string): Promise<never> {
  if (e instanceof RequeueError) {
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }
  if (!isSystemFault(e)) throw e;
  throw new SystemFaultError();
}
