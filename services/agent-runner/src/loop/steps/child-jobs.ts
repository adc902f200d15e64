import { callerTraceparent, childId, JOB_RETRY, type JobData } from '@agentmesh/shared';
import type { Job, JobsOptions, Queue } from 'bullmq';
import type { Activation } from '../store/activation-store.js';

/** A child invocation's job, on its agent's queue, with the parent's job as its parent. */
export interface ChildJob {
  name: string;
  data: JobData;
  opts: JobsOptions & { jobId: string };
}

/** The jobs of sub-agent calls of `activation`, whose job is `parent`. */
export function childJobs(
  parent: Job,
  activation: Activation,
  calls: { name: string; callId: string }[],
  retentionSeconds: number,
): ChildJob[] {
  const s = activation.state;
  // Each child's invoke_agent span hangs under this activation's span (docs/reference/traces.md).
  const traceparent = callerTraceparent(s.traceparent);
  return calls.map((c) => {
    const id = childId(s.id, c.callId);
    return {
      name: c.name,
      data: {
        v: 1,
        invocationId: id,
        rootId: s.rootId,
        agent: c.name,
        ...(traceparent ? { traceparent } : {}),
      },
      opts: {
        jobId: id,
        parent: { id: parent.id!, queue: parent.queueQualifiedName },
        // A failed child job must never leave its parent waiting forever (bullmq #3362).
        ignoreDependencyOnFailure: true,
        ...JOB_RETRY,
        removeOnComplete: { age: retentionSeconds },
        removeOnFail: { age: retentionSeconds },
      },
    };
  });
}

/** Adds the jobs with BullMQ's own calls, a queue at a time (the fast path's: queue/fast-path/guarded-add.ts). */
export async function addChildJobs(queues: Map<string, Queue>, jobs: ChildJob[]): Promise<void> {
  const byQueue = new Map<string, ChildJob[]>();
  for (const j of jobs) byQueue.set(j.name, [...(byQueue.get(j.name) ?? []), j]);
  await Promise.all(
    [...byQueue].map(([agent, group]) => {
      // One job is one Lua step; addBulk would build a pipeline for it (the same step inside).
      const queue = queues.get(agent)!;
      const [one] = group;
      return group.length === 1 && one ? queue.add(one.name, one.data, one.opts) : queue.addBulk(group);
    }),
  );
}
