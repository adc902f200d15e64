import type { Job, Worker } from 'bullmq';

/**
 * Keeps the locks of jobs a stock BullMQ worker has taken but not yet begun to process. BullMQ
 * renews a job's lock from its processor call on, and its worker takes jobs one after another while
 * any wait, up to its concurrency, before it processes the first: with hundreds of slots and jobs
 * arriving (a burst of clients), the first job taken waited longer than RUNNER_LOCK_MS, lost its
 * lock, and was moved back by the stalled check while its activation ran. From BullMQ's `active`
 * event (a job taken) until its processor call, the lock is renewed here every half lock with
 * Job.extendLock, BullMQ's public API. (The queue fast path processes a job as soon as its take
 * answers: queue/fast-path/early-start.ts.)
 */
export class TakenLocks {
  private readonly waiting = new Map<string, NodeJS.Timeout>();

  constructor(private readonly lockMs: number) {}

  /** Renews each job `worker` takes until `processing` is called for it. */
  attach(worker: Worker): void {
    worker.on('active', (job: Job) => {
      if (job.id !== undefined && job.token !== undefined) this.keep(job, job.token);
    });
    worker.on('closed', () => {
      for (const timer of this.waiting.values()) clearTimeout(timer);
      this.waiting.clear();
    });
  }

  /** The processor call for the take of `job` with `token`: BullMQ renews its lock from now on. */
  processing(job: Job, token: string): void {
    const key = `${job.id}\n${token}`;
    clearTimeout(this.waiting.get(key));
    this.waiting.delete(key);
  }

  private keep(job: Job, token: string): void {
    const key = `${job.id}\n${token}`;
    const timer = setTimeout(() => {
      if (this.waiting.get(key) !== timer) return;
      // A lock already lost is not renewed: the job is another take's now, or back in its queue.
      job.extendLock(token, this.lockMs).then(
        () => {
          if (this.waiting.get(key) === timer) this.keep(job, token);
        },
        () => this.waiting.delete(key),
      );
    }, this.lockMs / 2);
    this.waiting.set(key, timer);
  }
}
