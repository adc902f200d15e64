import {
  BULLMQ_VERSION,
  bullmqScript,
  callerTraceparent,
  childId,
  JOB_RETRY,
  type JobData,
} from '@agentmesh/shared';
import { Job, type JobsOptions, type Queue } from 'bullmq';
import { type Activation, FencedOutError } from '../store/activation-store.js';

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
  // Each child's invoke_agent span hangs under this activation's span (DESIGN §15).
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

/** Adds the jobs with BullMQ's own calls, a queue at a time (on a cluster: see queueChildJobs). */
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

const ADD = bullmqScript('addStandardJob', 9);

/** A guarded step's answer (the add's, the park's: park-job.ts) when the parent's activation no longer holds the parent. */
export const FENCED = -9001;
const COMMAND = 'mesh_addChildJob';

/**
 * BullMQ's own step that adds a job (its installed text), behind a guard: the job is added only
 * while the activation that submits it still holds its parent — ARGV[4] names the parent's
 * invocation hash, ARGV[5] the activation's epoch (BullMQ reads ARGV 1–3 only). Queued in the
 * pipeline that creates the children, right behind it, the job can then never outlive a
 * submission another activation fenced out, as it could not when it was added after the
 * submission's reply: that reply is one round trip less before a runner takes the child.
 *
 * With ARGV[6] = '1' the submitting runner takes the job itself in the next step of the same
 * write (runner/hand-off.ts): when the job is the only one waiting, the queue's marker the add
 * set is taken away again, so no worker wakes to find the queue empty. (Redis serves a blocked
 * pop after each step, so this must be the add's own step.) Were that take never to run, the job
 * waits for a worker's next fetch, at most its block's timeout away.
 */
export const GUARDED_ADD = {
  numberOfKeys: ADD.keys,
  lua: `if ARGV[5] and redis.call('HGET', ARGV[4], 'epoch') ~= ARGV[5] then return ${FENCED} end
local meshAdded = (function()
${ADD.content}
end)()
if ARGV[6] == '1' and redis.call('LLEN', KEYS[1]) == 1 and redis.call('LINDEX', KEYS[1], 0) == meshAdded then
  redis.call('ZREM', KEYS[9], '0')
end
return meshAdded`,
};

/** Registers the guarded add on the connection the runner's store and queues share. */
export function defineGuardedAdd(client: {
  defineCommand(name: string, definition: { numberOfKeys: number; lua: string }): void;
}): void {
  client.defineCommand(COMMAND, GUARDED_ADD);
}

/**
 * Queues the jobs on `pipeline` (of a connection defineGuardedAdd registered on), each guarded by
 * the parent's epoch; returns how many. BullMQ builds each job's arguments as its own add would
 * (Job.addJob), and the pipeline stands in for its client. The job `handedOff` is taken by this
 * runner in the step queued right behind it (runner/hand-off.ts).
 */
export function queueChildJobs(
  pipeline: object,
  queues: Map<string, Queue>,
  jobs: ChildJob[],
  activation: Activation,
  parentInv: string,
  handedOff?: string,
): number {
  const send = (pipeline as Record<string, (args: unknown[]) => unknown>)[COMMAND];
  if (typeof send !== 'function') throw new Error(`${COMMAND} is not defined on the store's connection`);
  let handOff: string[] = [];
  const client = {
    runCommand(name: string, args: unknown[]) {
      if (name !== `addStandardJob:${BULLMQ_VERSION}`)
        throw new Error(`a child job is added as a standard job, not by ${name}`);
      send.call(pipeline, [...args, parentInv, String(activation.epoch), ...handOff]);
    },
  };
  for (const { name, data, opts } of jobs) {
    handOff = opts.jobId === handedOff ? ['1'] : [];
    const job = new Job(queues.get(name)!, name, data, opts, opts.jobId);
    const parentOpts = { parentKey: job.parentKey, parentDependenciesKey: `${job.parentKey}:dependencies` };
    // The step is queued before addJob's first await; its reply comes from the pipeline's results.
    void job.addJob(client as never, parentOpts).catch(() => undefined);
  }
  return jobs.length;
}

/** The replies of queueChildJobs' steps: a refused guard is a fenced-out activation. */
export function checkChildJobs(activation: Activation, replies: [Error | null, unknown][]): void {
  for (const [err, value] of replies) {
    if (err) throw err;
    if (value === FENCED) throw new FencedOutError(activation.state.id);
    if (typeof value === 'number' && value < 0) throw new Error(`bullmq refused a child job (${value})`);
  }
}
