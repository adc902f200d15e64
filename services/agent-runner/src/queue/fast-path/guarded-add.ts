import { bullKeys } from '@agentmesh/shared';
import { Job, type Queue } from 'bullmq';
import type { ChildJob } from '../../loop/steps/child-jobs.js';
import { type Activation, FencedOutError } from '../../loop/store/activation-store.js';
import { BULLMQ_VERSION, bullmqScript } from './bullmq-script.js';
import { GUARD_FENCED, runnerLua } from './runner-lua.js';

const ADD = bullmqScript('addStandardJob', 9);

const COMMAND = 'mesh_addChildJob';

/**
 * BullMQ's own step that adds a job (its installed text), behind a guard (lua/guarded-add.lua): the job is added only
 * while the activation that submits it still holds its parent — ARGV[4] names the parent's
 * invocation hash, ARGV[5] the activation's epoch (BullMQ reads ARGV 1–3 only). Queued in the
 * pipeline that creates the children, right behind it, the job can then never outlive a
 * submission another activation fenced out, as it could not when it was added after the
 * submission's reply: that reply is one round trip less before a runner takes the child.
 */
export const GUARDED_ADD = {
  numberOfKeys: ADD.keys,
  lua: runnerLua.text('guarded-add', { ADD: ADD.content }),
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
 * (Job.addJob), and the pipeline stands in for its client.
 */
export function queueChildJobs(
  pipeline: object,
  queues: Map<string, Queue>,
  jobs: ChildJob[],
  activation: Activation,
  parentInv: string,
): number {
  const send = (pipeline as Record<string, (args: unknown[]) => unknown>)[COMMAND];
  if (typeof send !== 'function') throw new Error(`${COMMAND} is not defined on the store's connection`);
  const client = {
    runCommand(name: string, args: unknown[]) {
      if (name !== `addStandardJob:${BULLMQ_VERSION}`)
        throw new Error(`a child job is added as a standard job, not by ${name}`);
      send.call(pipeline, [...args, parentInv, String(activation.epoch)]);
    },
  };
  for (const { name, data, opts } of jobs) {
    const job = new Job(queues.get(name)!, name, data, opts, opts.jobId);
    const parentOpts = {
      parentKey: job.parentKey,
      parentDependenciesKey: bullKeys.dependencies(job.parentKey!),
    };
    // The step is queued before addJob's first await; its reply comes from the pipeline's results.
    void job.addJob(client as never, parentOpts).catch(() => undefined);
  }
  return jobs.length;
}

/** The replies of queueChildJobs' steps: a refused guard is a fenced-out activation. */
export function checkChildJobs(activation: Activation, replies: [Error | null, unknown][]): void {
  for (const [err, value] of replies) {
    if (err) throw err;
    if (value === GUARD_FENCED) throw new FencedOutError(activation.state.id);
    if (typeof value === 'number' && value < 0) throw new Error(`bullmq refused a child job (${value})`);
  }
}
