import type { Job, Worker } from 'bullmq';

/** The parts of a BullMQ 6 worker every fetched job goes through (private in its types). */
interface ProcessingWorker {
  concurrency: number;
  nextJobFromJobData(jobData?: unknown, jobId?: string, token?: string): Promise<Job | undefined>;
  processJob(job: Job, token: string, fetchNext?: () => boolean): Promise<unknown>;
  /** The main loop's queue of jobs it holds (BullMQ's AsyncFifoQueue); null when it does not run. */
  mainLoopQueue: { add(job: Promise<unknown>): void; numTotal(): number } | null;
}

/** A take of a job: its id and the token its lock holds (a job is taken again after it parks). */
const takeOf = (id: string, token: string) => `${id}\n${token}`;

/**
 * Starts a job's processing as soon as its take answered. BullMQ's worker fetches one job after
 * another, up to its concurrency or until the queue is empty, and processes none before that: the
 * eight children of a delegation taken by one worker waited for all eight takes before the first
 * child's model call left. A job the take activated (take-activation.ts) has all it needs to run,
 * so BullMQ's own processing of it (processJob: the lock's renewal, the processor call, the
 * completion) starts right after the worker has sent its next fetch (setImmediate: after the
 * microtasks that send it), in the main loop's queue; the processing BullMQ's loop starts later
 * for the same take is then none. A take whose processing has not started when the loop gets to
 * it is processed there, as BullMQ would.
 *
 * Processing is keyed by the take (job id and token), never by the job alone: a parent parks and
 * is taken again with a token of its own, possibly before the loop got to its first take. With
 * hundreds of slots the loop may reach a take seconds after it; the lock is renewed from the early
 * start on (BullMQ tracks it from processJob), and a late loop neither tracks the old token over
 * the new one nor runs the job twice.
 */
export class EarlyStarts {
  /** Takes scheduled to start (their immediate), or started early (true), by takeOf. */
  private readonly takes = new Map<string, NodeJS.Immediate | true>();

  /** Makes `worker` process the takes for which `activated(jobId)` holds as soon as they answered. */
  attach(worker: Worker, activated: (jobId: string) => boolean): void {
    const w = worker as unknown as ProcessingWorker;
    const next = w.nextJobFromJobData.bind(w);
    const process = w.processJob.bind(w);
    w.nextJobFromJobData = async (jobData, jobId, token) => {
      const job = await next(jobData, jobId, token);
      const id = job?.id;
      if (!job || id === undefined || token === undefined || !activated(id)) return job;
      const take = takeOf(id, token);
      if (this.takes.has(take)) return job;
      const begin = setImmediate(() => {
        this.takes.set(take, true);
        const queue = w.mainLoopQueue;
        // As the loop would process it: its completion may fetch the next job into the same queue.
        const processing = process(job, token, () => queue !== null && queue.numTotal() <= w.concurrency);
        if (queue) queue.add(processing);
        else processing.catch(() => undefined); // the worker closed since: BullMQ's own handling stands
      });
      this.takes.set(take, begin);
      return job;
    };
    w.processJob = (job, token, fetchNext) => {
      const take = job.id === undefined ? undefined : takeOf(job.id, token);
      const early = take === undefined ? undefined : this.takes.get(take);
      if (early === undefined) return process(job, token, fetchNext);
      this.takes.delete(take!);
      if (early === true) return Promise.resolve(undefined); // processed already, from its take on
      clearImmediate(early);
      return process(job, token, fetchNext);
    };
  }
}
