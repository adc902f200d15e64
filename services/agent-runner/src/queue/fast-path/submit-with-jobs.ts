import type { Queue } from 'bullmq';
import type { Submission } from '../../loop/fast-path-ports.js';
import type { ActivationStore } from '../../loop/store/activation-store.js';
import { checkChildJobs, queueChildJobs } from './guarded-add.js';
import { queueParkJob } from './guarded-park.js';
import type { TrailingTakes } from './trailing-takes.js';

/** What a submission goes through: the runner's store, its queues and its workers' trailing takes, by agent name. */
export interface SubmitDeps {
  store: ActivationStore;
  queues: Map<string, Queue>;
  trailingTakes: ReadonlyMap<string, TrailingTakes>;
}

/**
 * Submits the children with each child's job behind its submission, in the same writes, guarded
 * by this activation's epoch (guarded-add.ts); the jobs of calls submitted before (a replay) go
 * with the last write. The first child's job is taken by this runner right behind its add
 * (trailing-takes.ts), and with `park` the parent's job parks last (guarded-park.ts). Resolves with
 * BullMQ's answer to that park (true: it waits for its children), undefined when it did not park.
 */
export async function submitWithJobs(ctx: SubmitDeps, sub: Submission): Promise<boolean | undefined> {
  const { job, activation, calls, fresh, jobs, park, token } = sub;
  const submitting = new Set(fresh.map((f) => f.callId));
  const first = fresh[0]?.callId;
  let jobPark: Promise<boolean> | undefined;
  const queue = (p: object, inv: string, part: { callIds: ReadonlySet<string>; last: boolean }) => {
    const mine = calls.flatMap((c, i) =>
      part.callIds.has(c.callId) || (part.last && !submitting.has(c.callId)) ? [jobs[i]!] : [],
    );
    const firstJob =
      first !== undefined && part.callIds.has(first)
        ? jobs[calls.findIndex((c) => c.callId === first)]
        : undefined;
    const trailing = firstJob ? ctx.trailingTakes?.get(firstJob.name) : undefined;
    // A parent that parks frees its slot for the child right after this write.
    const taking = trailing?.canTake(park.park) ? firstJob?.opts.jobId : undefined;
    const added = queueChildJobs(p, ctx.queues, mine, activation, inv, taking);
    if (taking) trailing?.queue(p); // not counted: its answer goes to the worker
    // Last, behind every job: the parent's job waits for them (not counted: answered apart).
    if (part.last && park.park && token !== undefined) jobPark = queueParkJob(p, job, token, activation, inv);
    return added;
  };
  checkChildJobs(activation, await ctx.store.submitChildren(activation, fresh, { ...park, behind: queue }));
  return jobPark ? await jobPark : undefined;
}
