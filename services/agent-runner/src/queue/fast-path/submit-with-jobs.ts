import type { Queue } from 'bullmq';
import type { Submission } from '../../loop/fast-path-ports.js';
import type { ActivationStore } from '../../loop/store/activation-store.js';
import { checkChildJobs, queueChildJobs } from './guarded-add.js';
import { queueParkJob } from './guarded-park.js';

/** What a submission goes through: the runner's store and its queues. */
export interface SubmitDeps {
  store: ActivationStore;
  queues: Map<string, Queue>;
}

/**
 * Submits the children with each child's job behind its submission, in the same writes, guarded
 * by this activation's epoch (guarded-add.ts); the jobs of calls submitted before (a replay) go
 * with the last write, and with `park` the parent's job parks last (guarded-park.ts). Resolves with
 * BullMQ's answer to that park (true: it waits for its children), undefined when it did not park.
 */
export async function submitWithJobs(ctx: SubmitDeps, sub: Submission): Promise<boolean | undefined> {
  const { job, activation, calls, fresh, jobs, park, token } = sub;
  const submitting = new Set(fresh.map((f) => f.callId));
  let jobPark: Promise<boolean> | undefined;
  const queue = (p: object, inv: string, part: { callIds: ReadonlySet<string>; last: boolean }) => {
    const mine = calls.flatMap((c, i) =>
      part.callIds.has(c.callId) || (part.last && !submitting.has(c.callId)) ? [jobs[i]!] : [],
    );
    const added = queueChildJobs(p, ctx.queues, mine, activation, inv);
    // Last, behind every job: the parent's job waits for them (not counted: answered apart).
    if (part.last && park.park && token !== undefined) jobPark = queueParkJob(p, job, token, activation, inv);
    return added;
  };
  checkChildJobs(activation, await ctx.store.submitChildren(activation, fresh, { ...park, behind: queue }));
  return jobPark ? await jobPark : undefined;
}
