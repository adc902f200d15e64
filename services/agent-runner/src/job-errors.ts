import { DelayedError, type Job } from 'bullmq';

/** The runner is draining and gives the job back: it goes to the queue for any runner to take. */
export class HandBackError extends Error {
  constructor() {
    super('The runner is shutting down and hands the invocation back.');
    this.name = 'HandBackError';
  }
}

/**
 * The one place mesh outcomes meet BullMQ semantics. Business failures never reach here: the
 * activation writes them into the invocation and the job completes. A hand-back moves the job to
 * the queue without spending an attempt (DelayedError, like WaitingChildrenError, does not count);
 * anything else is a system fault and BullMQ retries it with backoff.
 */
export async function settleJobError(e: unknown, job: Job, token: string): Promise<never> {
  if (e instanceof HandBackError) {
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }
  throw e;
}
