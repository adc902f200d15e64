import type { Job, Worker } from 'bullmq';

/** A job's processing under way: what BullMQ's processor call awaits, and its lock's signal. */
export interface JobRun {
  done: Promise<void>;
  /** Links the signal BullMQ gives the processor (aborted when the job's lock is lost). */
  link(signal: AbortSignal | undefined): void;
}

/** The part of a BullMQ 6 worker every fetched job goes through (private in its types). */
interface FetchingWorker {
  nextJobFromJobData(jobData?: unknown, jobId?: string, token?: string): Promise<Job | undefined>;
}

const noop = () => {};

/**
 * Starts a job's processing as soon as its take answered. BullMQ's worker fetches one job after
 * another, up to its concurrency or until the queue is empty, and starts processing none before
 * that: the eight children of a delegation taken by one worker waited for all eight takes before
 * the first child's model call left. A job the take activated
 * (take-activation.ts) has all it needs to run, so its run starts right after the worker has
 * sent its next fetch (setImmediate: after the microtasks that send it), and the processor call
 * BullMQ makes later joins that run. A job whose run has not started yet when BullMQ calls the
 * processor is started there, as BullMQ would.
 *
 * The job is BullMQ's, locked by its take: BullMQ tracks the lock from its processor call, which
 * follows the fetches by at most the worker's concurrency in takes, far inside the lock's duration.
 */
export class EarlyStarts {
  private readonly runs = new Map<string, JobRun | NodeJS.Immediate>();

  constructor(private readonly start: (job: Job, token: string) => JobRun) {}

  /** Makes `worker` start the jobs for which `activated(jobId)` holds as soon as it has taken them. */
  attach(worker: Worker, activated: (jobId: string) => boolean): void {
    const w = worker as unknown as FetchingWorker;
    const next = w.nextJobFromJobData.bind(w);
    w.nextJobFromJobData = async (jobData, jobId, token) => {
      const job = await next(jobData, jobId, token);
      const id = job?.id;
      if (job && id !== undefined && token !== undefined && activated(id) && !this.runs.has(id)) {
        const begin = setImmediate(() => {
          const run = this.start(job, token);
          run.done.catch(noop); // awaited by the processor call, which sees the failure
          this.runs.set(id, run);
        });
        this.runs.set(id, begin);
      }
      return job;
    };
  }

  /** The run of `job`: the one its take started, or one started now. */
  run(job: Job, token: string): JobRun {
    const early = job.id === undefined ? undefined : this.runs.get(job.id);
    if (early === undefined) return this.start(job, token);
    this.runs.delete(job.id!);
    if ('done' in early) return early;
    clearImmediate(early);
    return this.start(job, token);
  }
}
